package io.dynnibal.bench.cpu;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link CpuAccount.Split} over a window of training steps as milliseconds of CPU a step: cores
 * used x 1000 / steps a second. The job cannot run faster than the machine's cores divided by its
 * CPU a step, whatever the scheduling.
 */
public final class CpuPerStep {
  private CpuPerStep() {}

  /** The thread groups of the job's operators, by what the figures call them. */
  public static final Map<String, List<String>> OPERATORS =
      Map.of(
          "shards", List.of("shard-index"),
          "trainer", List.of("trainer"),
          "merge", List.of("negative-merge"));

  /**
   * CPU a step of each operator over a window ({@link #OPERATORS}, the rest as {@code other}) and
   * their {@code total}, in milliseconds: cores used x 1000 / steps a second.
   */
  public static Map<String, Double> cpuMillisPerStep(CpuAccount.Split cpu, double stepsPerSecond) {
    Map<String, Double> perStep = new LinkedHashMap<>();
    double total = 0;
    for (Map.Entry<String, Double> g : cpu.groupCores().entrySet()) {
      double ms = millisPerStep(g.getValue(), stepsPerSecond);
      perStep.put(g.getKey(), round(ms));
      total += ms;
    }
    perStep.put("total", round(total));
    return perStep;
  }

  /**
   * {@code other_cpu_ms_per_step}: the part of {@code other} the JIT compilers, the collector and
   * RocksDB's threads used a step, where they can be read (Linux); nothing where they cannot.
   */
  public static void putOtherMillisPerStep(
      Map<String, Object> figures, CpuAccount.Split cpu, double stepsPerSecond) {
    if (cpu.nativeCores().isEmpty()) {
      return;
    }
    Map<String, Double> perStep = new LinkedHashMap<>();
    for (Map.Entry<String, Double> kind : cpu.nativeCores().entrySet()) {
      perStep.put(kind.getKey(), round(millisPerStep(kind.getValue(), stepsPerSecond)));
    }
    figures.put("other_cpu_ms_per_step", perStep);
  }

  /** Cores busy over a window as milliseconds of CPU a step. */
  public static double millisPerStep(double cores, double stepsPerSecond) {
    return cores * 1000 / stepsPerSecond;
  }

  /** Three decimals; null (not measured) for NaN: how every benchmark's JSON writes a figure. */
  public static Double round(double v) {
    return Double.isNaN(v) ? null : Math.round(v * 1000) / 1000.0;
  }
}
