package io.dynnibal.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.FeatureConfig;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.MergedBatch;
import io.dynnibal.stream.QueryBatch;
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
      inputs.addNegatives(List.of(target("c1")));
      assertEquals(List.of("s1", "u1", "u2", "c1"), inputs.negativeIds);
      assertEquals(2, inputs.batch().size());
      assertEquals(4, inputs.negatives.size());
      StepInputs warmingUp = new StepInputs(merged, encoder, false);
      assertEquals(List.of("u1", "u2"), warmingUp.negativeIds, "no hard negative in the warm-up");
    }
  }
}
