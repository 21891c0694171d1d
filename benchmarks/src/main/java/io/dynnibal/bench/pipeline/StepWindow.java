package io.dynnibal.bench.pipeline;

import io.dynnibal.schemas.TrainingMetrics;
import java.util.ArrayList;
import java.util.List;

/**
 * What the trainer reported over the timed steps (after the warm-up). Means are over the window's
 * reports; the feedback latency over the model updates that reached every shard in it (NaN when
 * none did), and each of theirs in the order they landed.
 */
public record StepWindow(
    long steps,
    double stepsPerSecond,
    double trainerIdleFraction,
    double shardMillis,
    double slowestShardMillis,
    double mergeMillis,
    double negativesPerStep,
    int updatesLanded,
    double feedbackMillis,
    double feedbackSteps,
    List<Double> feedbackMillisEach,
    List<Long> feedbackStepsEach,
    long fromMillis,
    long toMillis) {

  /** The window from the first report at or after {@code fromStep} to the last report. */
  public static StepWindow of(List<TrainingMetrics> reports, long fromStep) {
    TrainingMetrics start = null;
    double shard = 0;
    double slowest = 0;
    double merge = 0;
    double negatives = 0;
    int n = 0;
    int landed = 0;
    List<Double> feedbackMs = new ArrayList<>();
    List<Long> feedbackSteps = new ArrayList<>();
    long cycles = -1;
    TrainingMetrics end = null;
    for (TrainingMetrics m : reports) {
      if (start == null) {
        if (m.getStep() >= fromStep) {
          start = m;
          cycles = m.getReencodeCycles();
        }
        continue;
      }
      end = m;
      n++;
      double sum = 0;
      double max = 0;
      for (double ms : m.getShardSamplingLatencyMs().values()) {
        sum += ms;
        max = Math.max(max, ms);
      }
      shard +=
          m.getShardSamplingLatencyMs().isEmpty() ? 0 : sum / m.getShardSamplingLatencyMs().size();
      slowest += max;
      merge += m.getMergeMs() == null ? 0 : m.getMergeMs();
      negatives += m.getNegativesPerStep() == null ? 0 : m.getNegativesPerStep();
      if (m.getReencodeCycles() > cycles && m.getFeedbackLatencyMs() != null) {
        landed++;
        feedbackMs.add(m.getFeedbackLatencyMs());
        feedbackSteps.add(m.getFeedbackLatencySteps());
      }
      cycles = m.getReencodeCycles();
    }
    if (end == null) {
      throw new IllegalStateException(
          "no step reported after step " + fromStep + ": nothing to time");
    }
    double seconds = (end.getTimeMs() - start.getTimeMs()) / 1000.0;
    double busy = end.getTrainerBusyMs() - start.getTrainerBusyMs();
    return new StepWindow(
        end.getStep() - start.getStep(),
        (end.getStep() - start.getStep()) / seconds,
        Math.max(0, 1 - busy / 1000.0 / seconds),
        shard / n,
        slowest / n,
        merge / n,
        negatives / n,
        landed,
        feedbackMs.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN),
        feedbackSteps.stream().mapToDouble(Long::doubleValue).average().orElse(Double.NaN),
        List.copyOf(feedbackMs),
        List.copyOf(feedbackSteps),
        start.getTimeMs(),
        end.getTimeMs());
  }
}
