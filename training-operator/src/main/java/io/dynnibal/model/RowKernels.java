package io.dynnibal.model;

import io.dynnibal.index.VectorMath;
import java.util.Arrays;

/**
 * The embedding tables' row kernels: a bag of features' pooled embedding (a weighted sum of rows)
 * and its backward scatter. Each output coordinate's terms are added in the order of the rows, each
 * product rounded to float first, so the Vector API kernels ({@link VectorizedKernels}, taken when
 * {@link VectorMath#VECTORIZED}) give the scalar loops' bits and a model trains to the same
 * parameters on either path.
 */
final class RowKernels {
  private RowKernels() {}

  /**
   * {@code out[offset + k] = sum over j < count of weights[j] * table[rows[j] * dim + k]} for
   * {@code k < dim}: the weighted sum of rows of a row-major table. The vector kernel keeps the
   * sums in registers across the rows, where the scalar loop reads and writes {@code out} for every
   * row.
   *
   * @param rows row indexes, each in {@code [0, table.length / dim)} (not checked here)
   */
  static void weightedRowSum(
      float[] table, int dim, int[] rows, float[] weights, int count, float[] out, int offset) {
    if (VectorMath.VECTORIZED) {
      VectorizedKernels.weightedRowSum(table, dim, rows, weights, count, out, offset);
    } else {
      scalarWeightedRowSum(table, dim, rows, weights, count, out, offset, 0);
    }
  }

  /** {@link #weightedRowSum}'s scalar loop, for the coordinates from {@code from} on. */
  static void scalarWeightedRowSum(
      float[] table,
      int dim,
      int[] rows,
      float[] weights,
      int count,
      float[] out,
      int offset,
      int from) {
    Arrays.fill(out, offset + from, offset + dim, 0f);
    for (int j = 0; j < count; j++) {
      int row = rows[j] * dim;
      float w = weights[j];
      for (int k = from; k < dim; k++) {
        out[offset + k] += w * table[row + k];
      }
    }
  }

  /**
   * {@code y[yOffset + k] += a * x[xOffset + k]} for {@code k < n}, each product rounded before the
   * sum, as the scalar loop does.
   */
  static void addScaled(float a, float[] x, int xOffset, float[] y, int yOffset, int n) {
    if (VectorMath.VECTORIZED) {
      VectorizedKernels.addScaled(a, x, xOffset, y, yOffset, n);
    } else {
      scalarAddScaled(a, x, xOffset, y, yOffset, 0, n);
    }
  }

  /** {@link #addScaled}'s scalar loop, for the coordinates {@code from} to {@code n - 1}. */
  static void scalarAddScaled(
      float a, float[] x, int xOffset, float[] y, int yOffset, int from, int n) {
    for (int k = from; k < n; k++) {
      y[yOffset + k] += a * x[xOffset + k];
    }
  }
}
