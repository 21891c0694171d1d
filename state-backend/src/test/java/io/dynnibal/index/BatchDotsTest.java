package io.dynnibal.index;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link VectorMath#dotsAll} scores a batch against a row-major matrix with the bits of {@link
 * VectorMath#dot(float[], float[])} and of the scalar loop, for every row, at every dimension
 * (whole lanes and tails) and batch size (groups of four and the rest), across row tiles.
 */
class BatchDotsTest {
  @ParameterizedTest
  @ValueSource(ints = {1, 3, 7, 8, 9, 16, 31, 64, 65, 128})
  void everyScoreIsTheSingleDotBitForBit(int dim) {
    SplittableRandom random = new SplittableRandom(dim);
    int n = 300 + random.nextInt(900); // several tiles at small dimensions
    int batch = 1 + random.nextInt(11);
    float[] rows = new float[n * dim];
    for (int i = 0; i < rows.length; i++) {
      rows[i] = (float) (random.nextGaussian() * Math.pow(10, random.nextInt(-3, 4)));
    }
    float[][] queries = new float[batch][dim];
    for (float[] q : queries) {
      for (int i = 0; i < dim; i++) {
        q[i] = (float) random.nextGaussian();
      }
    }
    float[][] out = new float[batch][n];
    VectorMath.dotsAll(queries, rows, dim, out);
    for (int q = 0; q < batch; q++) {
      for (int r = 0; r < n; r++) {
        float[] row = java.util.Arrays.copyOfRange(rows, r * dim, (r + 1) * dim);
        assertEquals(
            Float.floatToIntBits((float) VectorMath.dot(queries[q], row)),
            Float.floatToIntBits(out[q][r]),
            "query " + q + ", row " + r);
        assertEquals(
            Float.floatToIntBits((float) VectorMath.scalarDot(queries[q], row)),
            Float.floatToIntBits(out[q][r]),
            "the scalar loop, query " + q + ", row " + r);
      }
    }
  }
}
