package io.dynnibal.bench.cpu;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The CPU time of the threads no {@code ThreadMXBean} lists, read from Linux's {@code
 * /proc/self/task}: the JIT compilers, the garbage collector and RocksDB's background threads. The
 * JVM's own compilation figure ({@code CompilationMXBean}) is the compilers' elapsed time, which on
 * a machine whose cores are all busy counts every moment a compiler thread waited for a core, and
 * so reads well above the CPU the compiler threads used.
 *
 * <p>Each thread's name is read once and only the threads of a known kind are read again, so a
 * sample costs a directory listing and a handful of small reads.
 */
final class NativeThreads {
  /** The JIT compilers' threads. */
  static final String JIT = "jit";

  /** The collector's worker threads and the VM thread, which runs the collections' serial parts. */
  static final String GC = "gc";

  /** RocksDB's flush and compaction threads. */
  static final String ROCKSDB = "rocksdb";

  /** Every kind, in the order the figures list them. */
  static final List<String> KINDS = List.of(JIT, GC, ROCKSDB);

  /** Linux's USER_HZ: the unit of a thread's {@code utime} and {@code stime}. */
  private static final long NANOS_PER_TICK = 10_000_000L;

  private static final Path TASKS = Path.of("/proc/self/task");

  private final Map<String, String> kindOfThread = new HashMap<>();
  // Every kind is listed, one with no thread (no RocksDB in this JVM) at 0.
  private final CpuTotals<String> totals = new CpuTotals<>(KINDS);

  private NativeThreads() {}

  /** Null where the system has no {@code /proc/self/task}. */
  static NativeThreads open() {
    return Files.isDirectory(TASKS) ? new NativeThreads() : null;
  }

  /**
   * The kind of a thread by its Linux name ({@code comm}, at most 15 characters), null for one of
   * no kind counted here.
   */
  static String kind(String comm) {
    if (comm.startsWith("C1 CompilerThre") || comm.startsWith("C2 CompilerThre")) {
      return JIT;
    }
    if (comm.startsWith("GC Thread")
        || comm.startsWith("G1 ")
        || comm.startsWith("VM Thread")
        || comm.startsWith("ZWorker")
        || comm.startsWith("Shenandoah")) {
      return GC;
    }
    if (comm.startsWith("rocksdb:")) {
      return ROCKSDB;
    }
    return null;
  }

  /**
   * A thread's user + system CPU in nanoseconds from its {@code stat} line, whose second field is
   * its name in parentheses and may itself hold parentheses ({@code trainer (1/1)#0}): the fields
   * are counted from the last closing one.
   */
  static long cpuNanos(String stat) {
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
    // After the name: state, ppid, ..., utime is the 12th and stime the 13th.
    return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * NANOS_PER_TICK;
  }

  /**
   * Each kind's CPU since this reader opened, in nanoseconds; what a thread used after its last
   * sample is lost with it.
   */
  Map<String, Long> sample() {
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
      for (Path task : tasks) {
        String tid = task.getFileName().toString();
        String kind = kindOfThread.computeIfAbsent(tid, t -> kindOrNone(task));
        if (kind.isEmpty()) {
          continue;
        }
        long cpu;
        try {
          cpu = cpuNanos(Files.readString(task.resolve("stat")));
        } catch (IOException | RuntimeException e) {
          continue; // ended since the listing
        }
        totals.record(tid, kind, cpu);
      }
    } catch (IOException e) {
      // The listing failed: this sample repeats the last totals.
    }
    return totals.snapshot();
  }

  private static String kindOrNone(Path task) {
    try {
      String kind = kind(Files.readString(task.resolve("comm")).strip());
      return kind == null ? "" : kind;
    } catch (IOException e) {
      return "";
    }
  }
}
