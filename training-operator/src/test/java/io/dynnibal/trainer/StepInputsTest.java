package io.dynnibal.trainer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.FeatureConfig;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.MergedBatch;
import io.dynnibal.stream.QueryBatch;
import io.dynnibal.training.SamplingCorrection;
import java.util.List;
import org.junit.jupiter.api.Test;

class StepInputsTest {
  private static final DualEncoderConfig SMALL =
      new DualEncoderConfig(new FeatureConfig(1 << 10, 16, 4, 3, 4), 8, 16, 8, true, 20f);

  private static TargetFeatures target(String id) {
    return id == null
        ? new TargetFeatures()
        : new TargetFeatures(id, new int[] {1}, new float[] {1f}, null);
  }

  @Test
  void queriesWithoutAPositiveAreSetApartAndNegativesKeepTheirOrder() {
    MergedBatch merged = new MergedBatch();
    merged.batch = new QueryBatch();
    merged.batch.pairIds = new String[] {"p0", "p1", "p2"};
    merged.batch.queryTexts = new String[] {"audio player", "lost", "kernel docs"};
    merged.batch.targetIds = new String[] {"a", "gone", "k"};
    merged.positives = new TargetFeatures[] {target("a"), target(null), target("k")};
    merged.sampled = new TargetFeatures[] {target("s1")};
    merged.uniform = new TargetFeatures[] {target("u1"), target("u2")};
    try (DualEncoder encoder = DualEncoder.create(SMALL, 1)) {
      StepInputs inputs = new StepInputs(merged, encoder, true);
      assertEquals(List.of(1), inputs.unknownPositives);
      assertEquals(List.of("p0", "p2"), inputs.trainedPairs);
      assertEquals(List.of("a", "k"), inputs.positiveIds);
      inputs.addHardNegative(target("c1"), 1);
      assertEquals(List.of("s1", "u1", "u2", "c1"), inputs.negativeIds);
      assertEquals(2, inputs.batch(SamplingCorrection.Mode.NONE).size());
      assertEquals(4, inputs.negatives.size());
      StepInputs warmingUp = new StepInputs(merged, encoder, false);
      assertEquals(List.of("u1", "u2"), warmingUp.negativeIds, "no hard negative in the warm-up");
    }
  }

  @Test
  void theCorrectionCountsEachCandidateByHowOftenTheStepExpectedIt() {
    MergedBatch merged = new MergedBatch();
    merged.batch = new QueryBatch();
    merged.batch.pairIds = new String[] {"p0", "p1"};
    merged.batch.queryTexts = new String[] {"audio player", "kernel docs"};
    merged.batch.targetIds = new String[] {"a", "k"};
    merged.positives = new TargetFeatures[] {target("a"), target("k")};
    merged.sampled = new TargetFeatures[] {target("s1"), target("s2")};
    merged.sampledInclusion = new float[] {0.5f, 1f};
    merged.uniform = new TargetFeatures[] {target("u1"), target("s1")};
    merged.indexTargets = 1000;
    try (DualEncoder encoder = DualEncoder.create(SMALL, 1)) {
      StepInputs inputs = new StepInputs(merged, encoder, true);
      assertNull(inputs.batch(SamplingCorrection.Mode.NONE).columnOffsets());
      float[] offsets = inputs.batch(SamplingCorrection.Mode.LOGQ).columnOffsets();
      // 2 positives and 2 uniform draws over 1,000 targets: 0.004 expected of any one target.
      double random = 4 / 1000.0;
      float[] expected = {
        (float) -Math.log(random), // a
        (float) -Math.log(random), // k
        (float) -Math.log(random + 0.5), // s1, hard
        (float) -Math.log(random + 1), // s2, hard for certain
        (float) -Math.log(random), // u1
        (float) -Math.log(random + 0.5) // s1 again, drawn uniformly too: the same target's count
      };
      assertArrayEquals(expected, offsets, 1e-6f);
    }
  }
}
