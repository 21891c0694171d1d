package io.dynnibal.bench.pipeline;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.stream.Collectors;

/**
 * The JVM's garbage collectors by name, for the benchmarks' JSON: the collector moves the job's
 * steps/s, so a figure without it does not compare.
 */
public final class GarbageCollectors {
  private GarbageCollectors() {}

  /** E.g. {@code "PS Scavenge, PS MarkSweep"} (parallel) or {@code "G1 Young Generation, ..."}. */
  public static String names() {
    return ManagementFactory.getGarbageCollectorMXBeans().stream()
        .map(GarbageCollectorMXBean::getName)
        .collect(Collectors.joining(", "));
  }
}
