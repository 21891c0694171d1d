package io.dynnibal.jobs.shard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.FeatureConfig;
import org.junit.jupiter.api.Test;

/** A shard encodes only with a snapshot of the job's model shape. */
class ModelShapeTest {
  private static final DualEncoderConfig JOB =
      new DualEncoderConfig(new FeatureConfig(1 << 10, 16, 4, 3, 4), 8, 16, 8, true, 20f);

  @Test
  void theSameShapeMatches() {
    assertNull(ModelShape.difference(JOB, JOB));
  }

  @Test
  void anotherHiddenDimensionIsNamed() {
    DualEncoderConfig other =
        new DualEncoderConfig(new FeatureConfig(1 << 10, 16, 4, 3, 4), 8, 32, 8, true, 20f);
    assertEquals("hidden dimension 32 where the job has 16", ModelShape.difference(JOB, other));
  }

  @Test
  void anotherFeatureHashIsNamed() {
    DualEncoderConfig other =
        new DualEncoderConfig(new FeatureConfig(1 << 12, 16, 4, 3, 4), 8, 16, 8, true, 20f);
    assertEquals("features", ModelShape.difference(JOB, other).split(" ")[0]);
  }

  @Test
  void aManifestWithoutAModelIsNamed() {
    assertEquals("its manifest describes no model", ModelShape.difference(JOB, null));
  }
}
