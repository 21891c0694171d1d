package io.dynnibal.bench.cpu;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/**
 * CPU time by group, counted as each thread's own total grows from sample to sample: what a thread
 * used before it ended stays in its group's total. Threads are keyed by whatever id their reader
 * has ({@link CpuAccount}: the JVM's thread id; {@link NativeThreads}: Linux's task id).
 */
final class CpuTotals<T> {
  private final Map<T, Long> lastOfThread = new HashMap<>();
  private final Map<String, Long> totals = new HashMap<>();

  /** Totals that start at 0 for {@code groups} (a group no thread ever joins reads 0). */
  CpuTotals(Collection<String> groups) {
    for (String group : groups) {
      totals.put(group, 0L);
    }
  }

  /** Thread {@code thread} of {@code group} has used {@code cpuNanos} in all so far. */
  void record(T thread, String group, long cpuNanos) {
    long before = lastOfThread.getOrDefault(thread, 0L);
    // Less than before: the id was reused by a new thread (Linux reuses task ids).
    totals.merge(group, cpuNanos >= before ? cpuNanos - before : cpuNanos, Long::sum);
    lastOfThread.put(thread, cpuNanos);
  }

  /** Each group's CPU so far, in nanoseconds, as a copy. */
  Map<String, Long> snapshot() {
    return new HashMap<>(totals);
  }
}
