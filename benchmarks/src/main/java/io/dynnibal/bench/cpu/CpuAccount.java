package io.dynnibal.bench.cpu;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where a local job's CPU goes: the process's CPU time and each Java thread's, sampled every {@code
 * periodMillis} by a daemon thread, so that a benchmark can say after the fact how the machine's
 * cores were shared over a window of wall-clock time (the job's operators run in this JVM on a
 * MiniCluster). Threads are grouped by the operator they run ({@code shard-index (1/2)#0} is the
 * shards'); what no Java thread accounts for (RocksDB's and libtorch's own threads, the JVM's) is
 * the process's CPU less the threads'. A thread's CPU time includes the native code it calls
 * (libtorch's kernels on the trainer's thread). What a thread used between the last sample and its
 * end cannot be read any more, and counts as the process's other CPU. On Linux the JIT compilers',
 * the collector's and RocksDB's threads are read from {@code /proc} ({@link NativeThreads}) and
 * said apart within that other CPU.
 */
public final class CpuAccount implements AutoCloseable {

  /**
   * One sample: wall-clock time, the process's CPU, each thread group's and each native kind's
   * ({@link NativeThreads}; empty where unread), in nanoseconds, and the JIT compilers' accumulated
   * elapsed time in milliseconds (-1 where the JVM does not say).
   */
  record Sample(
      long wallMillis,
      long processNanos,
      Map<String, Long> groupNanos,
      Map<String, Long> nativeNanos,
      long compileMillis) {}

  /**
   * CPU per group over a window, in cores (CPU seconds per wall second); {@code nativeCores}, the
   * JIT compilers', the collector's and RocksDB's threads (part of {@code "other"}; empty where
   * {@code /proc} is not there to read); {@code compileCores}, the JIT compilers' CPU, or where it
   * cannot be read their elapsed time by the JVM's own account, which also counts their waits for a
   * core (NaN where unknown): a job's first minutes compile much of Flink, Kafka and DJL.
   */
  public record Split(
      double seconds,
      double processCores,
      Map<String, Double> groupCores,
      Map<String, Double> nativeCores,
      double compileCores) {}

  private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();

  /** The JIT's bean, null where the JVM does not time its compilations. */
  private final CompilationMXBean compiler = timedCompiler();

  private final com.sun.management.OperatingSystemMXBean os;
  private final NativeThreads nativeThreads = NativeThreads.open();
  private final Map<Long, String> groupOfThread = new HashMap<>();
  private final CpuTotals<Long> totals = new CpuTotals<>(List.of());
  private final List<Sample> samples = new ArrayList<>();
  private final Thread sampler;
  private volatile boolean running = true;

  private CpuAccount(long periodMillis) {
    os =
        ManagementFactory.getOperatingSystemMXBean()
                instanceof com.sun.management.OperatingSystemMXBean sun
            ? sun
            : null;
    sampler =
        new Thread(
            () -> {
              while (running) {
                sample();
                try {
                  Thread.sleep(periodMillis);
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "cpu-account");
    sampler.setDaemon(true);
  }

  /**
   * Starts sampling, or returns null where the JVM cannot measure threads' or the process's CPU
   * time (the benchmark then reports no split).
   */
  public static CpuAccount start(long periodMillis) {
    CpuAccount account = new CpuAccount(periodMillis);
    if (account.os == null
        || !account.threads.isThreadCpuTimeSupported()
        || account.os.getProcessCpuTime() < 0) {
      return null;
    }
    account.threads.setThreadCpuTimeEnabled(true);
    account.sample();
    account.sampler.start();
    return account;
  }

  /**
   * The operator a thread runs, from Flink's task thread name ({@code "shard-index (1/2)#0"} is
   * {@code shard-index}); other threads by their name without digits.
   */
  static String group(String threadName) {
    int subtask = threadName.indexOf(" (");
    String name = subtask > 0 ? threadName.substring(0, subtask) : threadName;
    return name.replaceAll("[0-9]+", "N");
  }

  private synchronized void sample() {
    for (long id : threads.getAllThreadIds()) {
      long cpu = threads.getThreadCpuTime(id);
      String group = cpu < 0 ? null : groupOf(id);
      if (group == null) {
        continue; // ended, or not measurable
      }
      totals.record(id, group, cpu);
    }
    long compiled = compiler == null ? -1 : compiler.getTotalCompilationTime();
    samples.add(
        new Sample(
            System.currentTimeMillis(),
            os.getProcessCpuTime(),
            totals.snapshot(),
            nativeThreads == null ? Map.of() : nativeThreads.sample(),
            compiled));
  }

  private static CompilationMXBean timedCompiler() {
    CompilationMXBean bean = ManagementFactory.getCompilationMXBean();
    return bean != null && bean.isCompilationTimeMonitoringSupported() ? bean : null;
  }

  /** A thread's group, its name read once (null when it ended before it was named). */
  private String groupOf(long id) {
    String group = groupOfThread.get(id);
    if (group == null) {
      ThreadInfo info = threads.getThreadInfo(id);
      if (info == null) {
        return null;
      }
      group = group(info.getThreadName());
      groupOfThread.put(id, group);
    }
    return group;
  }

  /**
   * How the CPU was shared from {@code fromMillis} to {@code toMillis} (wall clock), between the
   * samples that bracket the window most closely from inside it; null when fewer than two samples
   * fall in it. Groups are the keys of {@code groups} (a group's name to the thread groups it adds
   * up), {@code "other"} for everything else the process used.
   */
  public synchronized Split between(
      long fromMillis, long toMillis, Map<String, List<String>> groups) {
    Sample first = null;
    Sample last = null;
    for (Sample s : samples) {
      if (s.wallMillis() >= fromMillis && s.wallMillis() <= toMillis) {
        if (first == null) {
          first = s;
        }
        last = s;
      }
    }
    if (first == null || last == first) {
      return null;
    }
    double seconds = (last.wallMillis() - first.wallMillis()) / 1000.0;
    Map<String, Double> cores = new LinkedHashMap<>();
    double named = 0;
    for (Map.Entry<String, List<String>> g : groups.entrySet()) {
      long nanos = 0;
      for (String threadGroup : g.getValue()) {
        nanos +=
            last.groupNanos().getOrDefault(threadGroup, 0L)
                - first.groupNanos().getOrDefault(threadGroup, 0L);
      }
      cores.put(g.getKey(), nanos / 1e9 / seconds);
      named += nanos;
    }
    double process = (last.processNanos() - first.processNanos()) / 1e9 / seconds;
    cores.put("other", Math.max(0, process - named / 1e9 / seconds));
    Map<String, Double> nativeCores = new LinkedHashMap<>();
    for (String kind : NativeThreads.KINDS) {
      if (last.nativeNanos().containsKey(kind)) {
        long nanos = last.nativeNanos().get(kind) - first.nativeNanos().getOrDefault(kind, 0L);
        nativeCores.put(kind, nanos / 1e9 / seconds);
      }
    }
    double compile;
    if (nativeThreads != null) {
      compile = nativeCores.getOrDefault(NativeThreads.JIT, 0.0);
    } else if (first.compileMillis() >= 0) {
      compile = (last.compileMillis() - first.compileMillis()) / 1000.0 / seconds;
    } else {
      compile = Double.NaN;
    }
    return new Split(seconds, process, cores, nativeCores, compile);
  }

  @Override
  public void close() {
    running = false;
    sampler.interrupt();
  }
}
