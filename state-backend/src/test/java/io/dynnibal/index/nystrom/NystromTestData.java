package io.dynnibal.index.nystrom;

import io.dynnibal.index.ClusteredVectors;
import java.util.SplittableRandom;

/**
 * Encodings for the Nystrom tests: full-rank clustered ones, or ones confined to a low-rank
 * subspace.
 */
final class NystromTestData {
  private NystromTestData() {}

  /**
   * {@code count} vectors of dimension {@code dim} spanning a random {@code rank}-dimensional
   * subspace.
   */
  static float[][] lowRank(int count, int dim, int rank, long seed) {
    float[][] basis = ClusteredVectors.generate(rank, dim, seed);
    float[][] coefficients = ClusteredVectors.generate(count, rank, seed + 1);
    float[][] out = new float[count][dim];
    for (int i = 0; i < count; i++) {
      for (int k = 0; k < rank; k++) {
        for (int j = 0; j < dim; j++) {
          out[i][j] += coefficients[i][k] * basis[k][j];
        }
      }
    }
    return out;
  }

  /** {@code count} rows drawn from {@code from} without replacement. */
  static float[][] sample(float[][] from, int count, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    int[] order = random.ints(0, from.length).distinct().limit(count).toArray();
    float[][] out = new float[count][];
    for (int i = 0; i < count; i++) {
      out[i] = from[order[i]];
    }
    return out;
  }

  static double dot(float[] a, float[] b) {
    return io.dynnibal.index.VectorMath.dot(a, b);
  }

  static double cosine(float[] a, float[] b) {
    return io.dynnibal.index.VectorMath.cosine(a, b);
  }
}
