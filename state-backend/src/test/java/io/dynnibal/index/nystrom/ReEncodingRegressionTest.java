package io.dynnibal.index.nystrom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.ClusteredVectors;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ReEncodingRegressionTest {

  private static float[][] apply(float[][] matrix, float[][] rows) {
    float[][] out = new float[rows.length][matrix.length];
    for (int r = 0; r < rows.length; r++) {
      for (int i = 0; i < matrix.length; i++) {
        out[r][i] = (float) NystromTestData.dot(matrix[i], rows[r]);
      }
    }
    return out;
  }

  private static float[][] nearIdentity(int dim, double scale, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    float[][] a = new float[dim][dim];
    for (int i = 0; i < dim; i++) {
      for (int j = 0; j < dim; j++) {
        a[i][j] = (float) ((i == j ? 1 : 0) + scale * (random.nextDouble() - 0.5));
      }
    }
    return a;
  }

  /**
   * f_new = A f_old with the data in a subspace the landmarks span: the map must reproduce the true
   * new cache, with the landmarks moved by their new encodings or (the paper's variant) by the
   * regression itself.
   */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
  void aLinearDriftIsRecoveredExactly(boolean landmarksMovedByRegression) {
    float[][] oldEncodings = NystromTestData.lowRank(1_000, 48, 12, 7);
    float[][] landmarksOld = NystromTestData.sample(oldEncodings, 16, 8);
    NystromProjector before = NystromProjector.fit(landmarksOld, 1e-9);
    float[][] a = nearIdentity(48, 0.3, 9);
    float[][] newEncodings = apply(a, oldEncodings);

    float[][] cache = new float[oldEncodings.length][];
    for (int i = 0; i < cache.length; i++) {
      cache[i] = before.project(oldEncodings[i]);
    }
    int samples = 300;
    float[][] regressionCache = java.util.Arrays.copyOf(cache, samples);
    float[][] regressionTargets = java.util.Arrays.copyOf(newEncodings, samples);
    float[][] landmarkCache = new float[landmarksOld.length][];
    for (int i = 0; i < landmarksOld.length; i++) {
      landmarkCache[i] = before.project(landmarksOld[i]);
    }
    ReEncodingRegression.Result result =
        landmarksMovedByRegression
            ? ReEncodingRegression.fitMovingLandmarksByRegression(
                regressionCache, regressionTargets, landmarkCache, 1e-9, 1e-9)
            : ReEncodingRegression.fit(
                regressionCache, regressionTargets, apply(a, landmarksOld), 1e-9, 1e-9);

    float[] scratch = new float[16];
    for (int i = samples; i < cache.length; i++) {
      float[] z = cache[i].clone();
      result.map().applyInPlace(z, scratch);
      float[] truth = result.projector().project(newEncodings[i]);
      for (int k = 0; k < z.length; k++) {
        assertEquals(truth[k], z[k], 1e-3, "target " + i + " component " + k);
      }
    }
  }

  /** A smooth nonlinear change of a full-rank encoder: the approximation is close, not exact. */
  @Test
  void aSmoothNonlinearDriftIsApproximated() {
    int dim = 64;
    float[][] oldEncodings = ClusteredVectors.generate(3_000, dim, 10);
    float[][] g = nearIdentity(dim, 2.0, 11);
    float[][] newEncodings = new float[oldEncodings.length][dim];
    for (int i = 0; i < oldEncodings.length; i++) {
      double norm = 0;
      for (int j = 0; j < dim; j++) {
        double v = oldEncodings[i][j] + 0.1 * Math.tanh(NystromTestData.dot(g[j], oldEncodings[i]));
        newEncodings[i][j] = (float) v;
        norm += v * v;
      }
      for (int j = 0; j < dim; j++) {
        newEncodings[i][j] /= (float) Math.sqrt(norm);
      }
    }
    float[][] landmarks = NystromTestData.sample(oldEncodings, 48, 12);
    NystromProjector before = NystromProjector.fit(landmarks, 1e-6);
    int samples = 1_000;
    float[][] regressionCache = new float[samples][];
    for (int i = 0; i < samples; i++) {
      regressionCache[i] = before.project(oldEncodings[i]);
    }
    float[][] newLandmarks = new float[landmarks.length][];
    for (int i = 0; i < landmarks.length; i++) {
      for (int t = 0; t < oldEncodings.length; t++) {
        if (oldEncodings[t] == landmarks[i]) {
          newLandmarks[i] = newEncodings[t];
        }
      }
    }
    ReEncodingRegression.Result result =
        ReEncodingRegression.fit(
            regressionCache,
            java.util.Arrays.copyOf(newEncodings, samples),
            newLandmarks,
            1e-4,
            1e-6);
    double cosine = 0;
    double stale = 0;
    float[] scratch = new float[landmarks.length];
    for (int i = samples; i < oldEncodings.length; i++) {
      float[] z = before.project(oldEncodings[i]);
      float[] truth = result.projector().project(newEncodings[i]);
      stale +=
          NystromTestData.cosine(
              z, before.project(newEncodings[i])); // the stale cache, in its own basis
      result.map().applyInPlace(z, scratch);
      cosine += NystromTestData.cosine(z, truth);
    }
    cosine /= oldEncodings.length - samples;
    stale /= oldEncodings.length - samples;
    assertTrue(cosine > 0.97, "mean cosine to the true new cache " + cosine);
    assertTrue(
        cosine > stale,
        "re-encoding " + cosine + " no better than keeping the stale cache " + stale);
  }

  @Test
  void theMapReportsHowFarEachVectorMoved() {
    CacheMap doubling = new CacheMap(2, new float[] {2, 0, 0, 2});
    float[] z = {3, 4};
    assertEquals(5, doubling.applyInPlace(z, new float[2]), 1e-9);
    assertEquals(6, z[0]);
    assertEquals(8, z[1]);
    assertThrows(
        IllegalArgumentException.class, () -> new CacheMap(2, new float[] {1, 0, 0, Float.NaN}));
  }
}
