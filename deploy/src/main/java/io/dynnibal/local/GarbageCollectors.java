package io.dynnibal.local;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.stream.Collectors;

/**
 * The JVM's garbage collectors by name, for the benchmarks' JSON: the collector moves the job's
 * steps/s by 15-20 % on 2 cores (see the README's "The collector"), so a figure without it does not
 * compare.
 */
final class GarbageCollectors {
  private GarbageCollectors() {}

  /** E.g. {@code "PS Scavenge, PS MarkSweep"} (parallel) or {@code "G1 Young Generation, ..."}. */
  static String names() {
    return ManagementFactory.getGarbageCollectorMXBeans().stream()
        .map(GarbageCollectorMXBean::getName)
        .collect(Collectors.joining(", "));
  }
}
