package io.dynnibal.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.FeatureConfig;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.sampler.Uniform;
import io.dynnibal.schemas.DeadLetter;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.DeadLetters;
import io.dynnibal.stream.MergedBatch;
import io.dynnibal.stream.QueryBatch;
import io.dynnibal.training.SamplingCorrection;
import io.dynnibal.training.SkippedStep;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The trainer operator under Flink's test harness: its parameters and Adam's moments survive a
 * checkpoint through raw operator state (a restored trainer takes the same next steps, to the bit,
 * as the one that kept running), and every pair it takes is trained, dead-lettered or counted.
 */
class TrainerOperatorTest {
  private static final DualEncoderConfig SMALL =
      new DualEncoderConfig(new FeatureConfig(1 << 10, 16, 4, 3, 4), 8, 16, 8, true, 20f);

  @TempDir Path dir;

  @Test
  void aRestoredTrainerContinuesExactlyWhereTheCheckpointWas() throws Exception {
    Random draw = new Random(3);
    List<MergedBatch> batches = new java.util.ArrayList<>();
    for (int i = 0; i < 8; i++) {
      batches.add(batch(i, draw));
    }
    OperatorSubtaskState checkpoint;
    List<Double> expected;
    try (var running = harness("running")) {
      running.open();
      for (MergedBatch b : batches.subList(0, 5)) {
        running.processElement(new StreamRecord<>(b));
      }
      checkpoint = running.snapshot(1, 0);
      running.getOutput().clear();
      for (MergedBatch b : batches.subList(5, 8)) {
        running.processElement(new StreamRecord<>(b));
      }
      expected = losses(running);
    }
    assertTrue(
        checkpoint.getRawOperatorState().size() == 1,
        "the parameters travel as raw operator state");
    try (var restored = harness("restored")) {
      restored.initializeState(checkpoint);
      restored.open();
      for (MergedBatch b : batches.subList(5, 8)) {
        restored.processElement(new StreamRecord<>(b));
      }
      List<Double> actual = losses(restored);
      assertEquals(3, actual.size());
      assertEquals(expected, actual, "steps 6-8 after the restore");
    }
  }

  @Test
  void aRefusedStepDeadLettersEveryPairOfItsBatchAndTrainsOn() throws Exception {
    Random draw = new Random(5);
    try (var h = harness("refused", 0, new RefuseStepOnce(2))) {
      h.open();
      for (int i = 0; i < 3; i++) {
        h.processElement(new StreamRecord<>(batch(i, draw)));
      }
      List<TrainingMetrics> steps = h.extractOutputValues();
      assertEquals(2, steps.size(), "batches 0 and 2 trained, batch 1 refused");
      assertEquals(8, steps.get(1).getPairsTrained());
      assertEquals(4, steps.get(1).getPairsDeadLettered());
      assertEquals(1, steps.get(1).getStepsRefused());
      List<String> lettered = new java.util.ArrayList<>();
      for (var record : h.getSideOutput(DeadLetters.TAG)) {
        DeadLetter letter = record.getValue();
        assertTrue(letter.getMessage().contains("refused at step 2"), letter.getMessage());
        lettered.add(StandardCharsets.UTF_8.decode(letter.getKey()).toString());
      }
      assertEquals(List.of("p1-0", "p1-1", "p1-2", "p1-3"), lettered);
    }
  }

  @Test
  void batchesAfterMaxStepsAreCountedWithTheirPairs() throws Exception {
    Random draw = new Random(6);
    try (var h = harness("capped", 2, FaultInjection.NONE)) {
      h.open();
      for (int i = 0; i < 5; i++) {
        h.processElement(new StreamRecord<>(batch(i, draw)));
      }
      assertEquals(2, h.extractOutputValues().size(), "steps");
      assertEquals(
          12,
          ((TrainerFunction) ((TrainerOperator) h.getOperator()).getUserFunction())
              .pairsAfterMaxSteps());
    }
  }

  @Test
  void everyStartOfTheTrainerFencesThoseBeforeIt() {
    long fresh = ModelUpdates.Provenance.next(0, 0);
    long retried = ModelUpdates.Provenance.next(0, 1);
    long restored = ModelUpdates.Provenance.next(retried, 2);
    long restoredAgain = ModelUpdates.Provenance.next(retried, 3);
    long resumed = ModelUpdates.Provenance.next(restoredAgain, 0);
    assertTrue(fresh < retried && retried < restored && restored < restoredAgain);
    assertTrue(restoredAgain < resumed, "a new submission from a savepoint starts at attempt 0");
  }

  /** Refuses the first attempt at {@code step}, as a non-finite loss would. */
  private static final class RefuseStepOnce implements FaultInjection {
    private static final long serialVersionUID = 1L;
    private final long step;
    private boolean refused;

    RefuseStepOnce(long step) {
      this.step = step;
    }

    @Override
    public void beforeStep(long next) {
      if (next == step && !refused) {
        refused = true;
        throw new SkippedStep("the loss is NaN (drill)");
      }
    }
  }

  private OneInputStreamOperatorTestHarness<MergedBatch, TrainingMetrics> harness(String name)
      throws Exception {
    return harness(name, 0, FaultInjection.NONE);
  }

  private OneInputStreamOperatorTestHarness<MergedBatch, TrainingMetrics> harness(
      String name, long maxSteps, FaultInjection faults) throws Exception {
    TrainerSettings settings =
        new TrainerSettings(
            SMALL,
            new Uniform(),
            7,
            0.05f,
            1f,
            0,
            0,
            100,
            maxSteps,
            1000,
            0.9,
            4,
            8,
            1,
            NegativesMode.SAMPLE,
            1.0,
            SamplingCorrection.Mode.LOGQ,
            0f,
            0,
            dir.resolve(name).toString(),
            "pairs",
            "test-job",
            List.of(),
            1);
    return new OneInputStreamOperatorTestHarness<>(new TrainerOperator(settings, faults));
  }

  private static List<Double> losses(
      OneInputStreamOperatorTestHarness<MergedBatch, TrainingMetrics> harness) {
    return harness.extractOutputValues().stream().map(TrainingMetrics::getLoss).toList();
  }

  /** Four pairs with their positives and four uniform negatives, all from a 40-word vocabulary. */
  private static MergedBatch batch(int id, Random draw) {
    MergedBatch merged = new MergedBatch();
    merged.batch = new QueryBatch();
    merged.batch.batchId = id;
    int n = 4;
    merged.batch.pairIds = new String[n];
    merged.batch.queryTexts = new String[n];
    merged.batch.targetIds = new String[n];
    merged.positives = new TargetFeatures[n];
    for (int q = 0; q < n; q++) {
      int t = draw.nextInt(40);
      merged.batch.pairIds[q] = "p" + id + "-" + q;
      merged.batch.queryTexts[q] = "word" + t + " query";
      merged.batch.targetIds[q] = "t" + t;
      merged.positives[q] = target(t);
    }
    merged.sampled = new TargetFeatures[0];
    merged.uniform = new TargetFeatures[n];
    for (int u = 0; u < n; u++) {
      merged.uniform[u] = target(draw.nextInt(40));
    }
    merged.shardMillis = new double[0];
    return merged;
  }

  private static TargetFeatures target(int t) {
    return new TargetFeatures("t" + t, new int[] {t, 100 + t}, new float[] {1f, 0.5f}, null);
  }
}
