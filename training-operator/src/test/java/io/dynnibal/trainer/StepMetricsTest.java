package io.dynnibal.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.stream.MergedBatch;
import io.dynnibal.training.StepResult;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The trainer's busy and idle time, and what each report says about the step's inputs. */
class StepMetricsTest {
  private static final long MS = 1_000_000L;
  private final AtomicLong clock = new AtomicLong();
  private final StepMetrics metrics = new StepMetrics("run", "dynnibal-mh", 8, clock::get);
  private final FeedbackTracker feedback = new FeedbackTracker(() -> 0L);

  private TrainingMetrics step(int step, long arrivedMs, long doneMs, MergedBatch merged) {
    clock.set(doneMs * MS);
    return metrics.stepped(
        new StepResult(step, 1f, 1e-3f, 0, 0, 1f, false, 1),
        merged,
        List.of("pair-" + step),
        40,
        arrivedMs * MS,
        0,
        feedback,
        Map.of(),
        0);
  }

  private static MergedBatch merged(double mergeMillis) {
    MergedBatch m = new MergedBatch();
    m.shardMillis = new double[] {3, 5};
    m.mergeMillis = mergeMillis;
    return m;
  }

  @Test
  void theTrainerIsIdleForTheTimeBetweenFinishingOneBatchAndStartingTheNext() {
    clock.set(1_000 * MS);
    metrics.aboutToStep();
    TrainingMetrics first = step(1, 1_000, 1_300, merged(2));
    assertEquals(300.0, first.getTrainerBusyMs(), 1e-9);
    assertEquals(0.0, first.getTrainerIdleFraction(), 1e-9);
    // Waited 700 ms for the next batch, then worked 200 ms on it: busy 500 of 1,200 ms.
    TrainingMetrics second = step(2, 2_000, 2_200, merged(2));
    assertEquals(500.0, second.getTrainerBusyMs(), 1e-9);
    assertEquals(1 - 500.0 / 1_200, second.getTrainerIdleFraction(), 1e-9);
  }

  @Test
  void timeBeforeTheFirstStepIsNeitherBusyNorIdle() {
    // The first batch arrived while the trainer was still setting up (indexing is not training).
    clock.set(1_000 * MS);
    metrics.aboutToStep();
    TrainingMetrics first = step(1, 400, 1_100, merged(2));
    assertEquals(100.0, first.getTrainerBusyMs(), 1e-9);
    assertEquals(0.0, first.getTrainerIdleFraction(), 1e-9);
  }

  @Test
  void eachReportCarriesItsStepsNegativesAndMergeTime() {
    clock.set(0);
    metrics.aboutToStep();
    TrainingMetrics report = step(1, 0, 10, merged(2.5));
    assertEquals(40L, report.getNegativesPerStep());
    assertEquals(2.5, report.getMergeMs(), 1e-9);
    assertNull(step(2, 10, 20, merged(Double.NaN)).getMergeMs(), "not measured: null, not NaN");
  }
}
