package io.dynnibal.index.nystrom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.ClusteredVectors;
import io.dynnibal.index.VectorMath;
import org.junit.jupiter.api.Test;

class NystromProjectorTest {

  @Test
  void innerProductsAndDistancesAreExactWhenTheDataRankIsAtMostTheLandmarks() {
    float[][] data = NystromTestData.lowRank(400, 64, 16, 1);
    NystromProjector projector = NystromProjector.fit(NystromTestData.sample(data, 24, 2), 1e-9);
    assertEquals(16, projector.rank());
    for (int i = 0; i < 100; i++) {
      float[] a = data[i];
      float[] b = data[399 - i];
      float[] za = projector.project(a);
      float[] zb = projector.project(b);
      assertEquals(
          VectorMath.dot(a, b),
          VectorMath.dot(za, zb),
          1e-4 * (1 + Math.abs(VectorMath.dot(a, b))));
      assertEquals(VectorMath.distance(a, b), VectorMath.distance(za, zb), 1e-4);
    }
  }

  /** Each cached coordinate is its row's sum taken alone, in order: the same bits. */
  @Test
  void aProjectionIsEachRowSummedInOrder() {
    for (int landmarks : new int[] {5, 8, 13}) {
      float[][] data = ClusteredVectors.generate(200, 19, landmarks);
      NystromProjector projector =
          NystromProjector.fit(NystromTestData.sample(data, landmarks, 4), 1e-9);
      float[] p = projector.projectionMatrix();
      for (float[] v : data) {
        float[] z = projector.project(v);
        for (int i = 0; i < landmarks; i++) {
          double sum = 0;
          for (int j = 0; j < v.length; j++) {
            sum += (double) p[i * v.length + j] * v[j];
          }
          assertEquals(Float.floatToIntBits((float) sum), Float.floatToIntBits(z[i]));
        }
      }
    }
  }

  @Test
  void fidelityOnFullRankDataImprovesWithMoreLandmarks() {
    float[][] data = ClusteredVectors.generate(2_000, 64, 3);
    double previous = Double.POSITIVE_INFINITY;
    for (int landmarks : new int[] {8, 32, 64}) {
      NystromProjector projector =
          NystromProjector.fit(NystromTestData.sample(data, landmarks, 4), 1e-9);
      double error = 0;
      for (int i = 0; i < 500; i++) {
        float[] a = data[i];
        float[] b = data[1_999 - i];
        error +=
            Math.abs(
                VectorMath.dot(a, b) - VectorMath.dot(projector.project(a), projector.project(b)));
      }
      error /= 500;
      assertTrue(
          error < previous, landmarks + " landmarks: error " + error + " not below " + previous);
      previous = error;
    }
    assertTrue(previous < 1e-3, "64 landmarks span 64 dimensions, error " + previous);
  }

  /**
   * {@code |z| <= |v|}: the cache projects onto the landmarks' span and never inflates a vector,
   * even with a near-duplicate landmark (whose tiny eigenvalue the floor drops instead of dividing
   * by it).
   */
  @Test
  void nearDuplicateLandmarksAreRegularisedAway() {
    float[][] data = ClusteredVectors.generate(100, 16, 5);
    float[][] landmarks = NystromTestData.sample(data, 8, 6);
    landmarks[7] = landmarks[6].clone();
    landmarks[7][0] += 1e-4f;
    NystromProjector projector = NystromProjector.fit(landmarks, 1e-6);
    assertEquals(7, projector.rank());
    for (float[] v : data) {
      assertTrue(VectorMath.norm(projector.project(v)) <= VectorMath.norm(v) * (1 + 1e-4));
    }
  }

  @Test
  void badInputIsRejected() {
    float[][] landmarks = {{1, 0}, {0, Float.NaN}};
    assertThrows(IllegalArgumentException.class, () -> NystromProjector.fit(landmarks, 1e-6));
    NystromProjector ok = NystromProjector.fit(new float[][] {{1, 0}, {0, 1}}, 1e-6);
    assertThrows(IllegalArgumentException.class, () -> ok.project(new float[3]));
  }
}
