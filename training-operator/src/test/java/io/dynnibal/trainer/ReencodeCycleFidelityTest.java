package io.dynnibal.trainer;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.nystrom.NystromProjector;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The held-out cosine of a re-encode cycle tells a map that generalises from one that does not:
 * near 1 when the tower moved linearly (what the d' x d' map can follow), low when the new
 * encodings have nothing to do with the old ones.
 */
class ReencodeCycleFidelityTest {
  private static final int D = 16;
  private static final int LANDMARKS = 8;
  private static final int SAMPLES = 400;

  @Test
  void aLinearMoveOfTheTowerIsFollowedOnHeldOutSamples() {
    // Encodings of rank d' (what d' landmarks can represent exactly), moved by a near-identity map.
    Random random = new Random(1);
    float[][] basis = gaussian(random, D, LANDMARKS);
    float[][] old = new float[SAMPLES][];
    for (int i = 0; i < SAMPLES; i++) {
      old[i] = times(basis, gaussian(random, 1, LANDMARKS)[0]);
    }
    float[][] moved = new float[SAMPLES][];
    float[][] rotation = nearIdentity(random, 0.2);
    for (int i = 0; i < SAMPLES; i++) {
      moved[i] = times(rotation, old[i]);
    }
    double[] cosine = cosine(old, moved);
    assertTrue(cosine[0] > 0.99 && cosine[1] > 0.9, "mean " + cosine[0] + ", min " + cosine[1]);
  }

  @Test
  void newEncodingsUnrelatedToTheOldOnesFailIt() {
    Random random = new Random(2);
    float[][] old = gaussian(random, SAMPLES, D);
    float[][] unrelated = gaussian(random, SAMPLES, D);
    double[] cosine = cosine(old, unrelated);
    assertTrue(cosine[0] < 0.5, "mean " + cosine[0]);
  }

  @Test
  void tooFewSamplesToHoldOutGiveNaN() {
    Random random = new Random(3);
    float[][] old = gaussian(random, 2 * LANDMARKS, D);
    double[] cosine = cosine(old, old);
    assertTrue(Double.isNaN(cosine[0]) && Double.isNaN(cosine[1]));
  }

  /** Old caches are the old encodings' Nyström vectors under landmarks among them. */
  private static double[] cosine(float[][] oldEncodings, float[][] newEncodings) {
    float[][] oldLandmarks = new float[LANDMARKS][];
    float[][] newLandmarks = new float[LANDMARKS][];
    for (int i = 0; i < LANDMARKS; i++) {
      oldLandmarks[i] = oldEncodings[i];
      newLandmarks[i] = newEncodings[i];
    }
    NystromProjector before = NystromProjector.fit(oldLandmarks, ReencodeCycle.EIGEN_FLOOR);
    float[][] oldCache = new float[oldEncodings.length][];
    for (int i = 0; i < oldEncodings.length; i++) {
      oldCache[i] = before.project(oldEncodings[i]);
    }
    return ReencodeCycle.heldOutCosine(oldCache, newEncodings, newLandmarks, LANDMARKS);
  }

  private static float[][] gaussian(Random random, int n, int d) {
    float[][] out = new float[n][d];
    for (float[] row : out) {
      for (int j = 0; j < d; j++) {
        row[j] = (float) random.nextGaussian();
      }
    }
    return out;
  }

  private static float[][] nearIdentity(Random random, double noise) {
    float[][] m = gaussian(random, D, D);
    for (int i = 0; i < D; i++) {
      for (int j = 0; j < D; j++) {
        m[i][j] = (float) ((i == j ? 1 : 0) + noise * m[i][j] / Math.sqrt(D));
      }
    }
    return m;
  }

  private static float[] times(float[][] m, float[] v) {
    float[] out = new float[m.length];
    for (int i = 0; i < m.length; i++) {
      double s = 0;
      for (int j = 0; j < v.length; j++) {
        s += m[i][j] * v[j];
      }
      out[i] = (float) s;
    }
    return out;
  }
}
