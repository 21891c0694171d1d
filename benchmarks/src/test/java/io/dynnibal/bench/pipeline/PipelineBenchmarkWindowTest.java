package io.dynnibal.bench.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.schemas.TrainingMetrics;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The timed window of {@code bench pipeline}, computed from the trainer's reports. */
class PipelineBenchmarkWindowTest {
  /**
   * Step s at 100 s ms, busy 60 ms per step, shards 10 and 30 ms, merge 5 ms, 40 negatives; an
   * update lands everywhere at step 7 (latency 250 ms, 3 steps).
   */
  private static List<TrainingMetrics> reports() {
    List<TrainingMetrics> out = new ArrayList<>();
    for (long s = 1; s <= 10; s++) {
      out.add(
          TrainingMetrics.newBuilder()
              .setStep(s)
              .setModelVersion(s >= 5 ? 1 : 0)
              .setTimeMs(1_000_000 + 100 * s)
              .setSampler("dynnibal-mh")
              .setLoss(1)
              .setLearningRate(1e-3)
              .setStepsPerSecond(10)
              .setShardSamplingLatencyMs(new HashMap<>(Map.of("0", 10.0, "1", 30.0)))
              .setMergeMs(5.0)
              .setNegativesPerStep(40L)
              .setTrainerBusyMs(60.0 * s)
              .setReencodeCycles(s >= 7 ? 1 : 0)
              .setFeedbackLatencyMs(s >= 7 ? 250.0 : null)
              .setFeedbackLatencySteps(s >= 7 ? 3L : null)
              .build());
    }
    return out;
  }

  @Test
  void timesTheStepsAfterTheWarmUpFromTheReportsOwnClock() {
    StepWindow w = StepWindow.of(reports(), 4);
    assertEquals(6, w.steps());
    assertEquals(10.0, w.stepsPerSecond(), 1e-9); // 6 steps in 600 ms
    assertEquals(0.4, w.trainerIdleFraction(), 1e-9); // busy 360 of 600 ms
    assertEquals(1_000_400, w.fromMillis()); // what the CPU account is read over
    assertEquals(1_001_000, w.toMillis());
  }

  @Test
  void averagesShardsMergeAndDoseOverTheWindow() {
    StepWindow w = StepWindow.of(reports(), 4);
    assertEquals(20.0, w.shardMillis(), 1e-9);
    assertEquals(30.0, w.slowestShardMillis(), 1e-9);
    assertEquals(5.0, w.mergeMillis(), 1e-9);
    assertEquals(40.0, w.negativesPerStep(), 1e-9);
  }

  @Test
  void countsEachUpdateThatLandsInTheWindowOnce() {
    StepWindow w = StepWindow.of(reports(), 4);
    assertEquals(1, w.updatesLanded());
    assertEquals(250.0, w.feedbackMillis(), 1e-9);
    assertEquals(3.0, w.feedbackSteps(), 1e-9);
    assertEquals(List.of(250.0), w.feedbackMillisEach());
    assertEquals(List.of(3L), w.feedbackStepsEach());
  }

  @Test
  void reportsEachUpdateApartAndTheirMean() {
    List<TrainingMetrics> reports = reports();
    // A second update, slower, lands at step 9.
    reports.get(8).setReencodeCycles(2L);
    reports.get(8).setFeedbackLatencyMs(4_250.0);
    reports.get(8).setFeedbackLatencySteps(5L);
    reports.get(9).setReencodeCycles(2L);
    StepWindow w = StepWindow.of(reports, 4);
    assertEquals(2, w.updatesLanded());
    assertEquals(List.of(250.0, 4_250.0), w.feedbackMillisEach());
    assertEquals(List.of(3L, 5L), w.feedbackStepsEach());
    assertEquals(2_250.0, w.feedbackMillis(), 1e-9);
    assertEquals(4.0, w.feedbackSteps(), 1e-9);
  }

  @Test
  void anUpdateThatLandedBeforeTheWindowIsNotCounted() {
    StepWindow w = StepWindow.of(reports(), 8);
    assertEquals(0, w.updatesLanded());
    assertTrue(Double.isNaN(w.feedbackMillis()));
    assertEquals(List.of(), w.feedbackMillisEach());
  }

  @Test
  void aWindowWithoutStepsIsAnError() {
    assertThrows(IllegalStateException.class, () -> StepWindow.of(reports(), 10));
  }
}
