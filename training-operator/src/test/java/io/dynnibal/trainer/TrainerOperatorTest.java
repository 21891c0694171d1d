package io.dynnibal.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.FeatureConfig;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.sampler.Uniform;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.MergedBatch;
import io.dynnibal.stream.QueryBatch;
import io.dynnibal.training.SamplingCorrection;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The trainer's parameters and Adam's moments survive a Flink checkpoint through raw operator
 * state: a trainer restored from the snapshot takes the same next steps, to the bit, as the one
 * that kept running.
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

  private OneInputStreamOperatorTestHarness<MergedBatch, TrainingMetrics> harness(String name)
      throws Exception {
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
            0,
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
            List.of(),
            1);
    return new OneInputStreamOperatorTestHarness<>(
        new TrainerOperator(settings, FaultInjection.NONE));
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
