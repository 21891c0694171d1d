package io.dynnibal.training;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.nn.Parameter;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.FeatureConfig;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class DenseAdamTest {
  private static final DualEncoderConfig SMALL =
      new DualEncoderConfig(new FeatureConfig(1 << 10, 16, 4, 3, 4), 8, 16, 8, true, 20f);

  /** A skipped batch must not leave its NaN behind: every later step would be refused too. */
  @Test
  void clearingGradientsRemovesNaN() {
    try (DualEncoder encoder = DualEncoder.create(SMALL, 1);
        NDManager scope = encoder.manager().newSubManager()) {
      DenseAdam adam =
          new DenseAdam(
              encoder.queryTower().parameters(),
              io.dynnibal.model.AdamSettings.DEFAULT,
              encoder.manager());
      for (Parameter p : encoder.queryTower().parameters()) {
        NDArray gradient = p.getArray().getGradient();
        float[] nan = new float[(int) gradient.size()];
        Arrays.fill(nan, Float.NaN);
        gradient.set(nan);
      }
      adam.clearGradients(scope);
      for (Parameter p : encoder.queryTower().parameters()) {
        float[] cleared = p.getArray().getGradient().toFloatArray();
        assertArrayEquals(new float[cleared.length], cleared, p.getName());
      }
    }
  }
}
