package io.dynnibal.index;

import java.util.Objects;

/**
 * Scores of a batch of queries against a tile of {@link #ROWS} rows stored transposed (coordinate
 * {@code j} of row {@code r} at {@code tile[j * ROWS + r]}), with what a softmax over them needs:
 * the largest score among weighted rows and the weighted sum of exponentials. Row {@code r}'s score
 * is {@code scale[r] * acc}, where {@code acc} runs over the coordinates in order, {@code acc =
 * fma(tile[j * ROWS + r], x[j], acc)} from zero: each row in a lane of its own, never added across
 * lanes, so the same bits on the Vector API and the scalar loops, in any batch and for any vector
 * width. A tile is a few rows' worth of a contiguous cache, loaded once for every query of a batch:
 * the blocked scoring that brute force over a cache is at its fastest with.
 */
public final class TileScores {
  /** Rows per tile: 64 KB of floats at 64 coordinates, within a core's second-level cache. */
  public static final int ROWS = 256;

  private TileScores() {}

  /**
   * {@code out[q][r]} for every query {@code q} and row {@code r < ROWS} of {@code tile} ({@code
   * dim * ROWS} floats, {@code dim} the queries' length).
   */
  public static void dots(float[] tile, float[] scale, float[][] queries, float[][] out) {
    if (queries.length == 0) {
      return;
    }
    int dim = queries[0].length;
    if (tile.length != dim * ROWS || scale.length != ROWS) {
      throw new IllegalArgumentException(
          "a tile of " + tile.length + " floats is not " + ROWS + " rows of " + dim);
    }
    if (VectorMath.VECTORIZED) {
      VectorizedTiles.dots(tile, scale, queries, out);
    } else {
      scalarDots(tile, scale, queries, out);
    }
  }

  static void scalarDots(float[] tile, float[] scale, float[][] queries, float[][] out) {
    int dim = queries.length == 0 ? 0 : queries[0].length;
    for (int q = 0; q < queries.length; q++) {
      float[] x = queries[q];
      for (int r = 0; r < ROWS; r++) {
        float acc = 0;
        for (int j = 0; j < dim; j++) {
          acc = Math.fma(tile[j * ROWS + r], x[j], acc);
        }
        out[q][r] = scale[r] * acc;
      }
    }
  }

  /**
   * {@code out.length} codes from {@code codes[offset]} on, as floats ({@code out.length} whole
   * rows of a tile): a tile of codes stored transposed, made ready for {@link #dots}.
   */
  public static void widen(byte[] codes, int offset, float[] out) {
    if (out.length % ROWS != 0) {
      throw new IllegalArgumentException(out.length + " floats are not whole rows of a tile");
    }
    Objects.checkFromIndexSize(offset, out.length, codes.length);
    if (VectorMath.VECTORIZED) {
      VectorizedTiles.widen(codes, offset, out);
    } else {
      scalarWiden(codes, offset, out);
    }
  }

  static void scalarWiden(byte[] codes, int offset, float[] out) {
    for (int i = 0; i < out.length; i++) {
      out[i] = codes[offset + i];
    }
  }

  /** The largest {@code scores[r]} with {@code weight[r] > 0}; negative infinity if none. */
  public static float max(float[] scores, float[] weight) {
    if (VectorMath.VECTORIZED) {
      return VectorizedTiles.max(scores, weight);
    }
    return scalarMax(scores, weight);
  }

  static float scalarMax(float[] scores, float[] weight) {
    float max = Float.NEGATIVE_INFINITY;
    for (int r = 0; r < ROWS; r++) {
      if (weight[r] > 0) {
        max = Math.max(max, scores[r]);
      }
    }
    return max;
  }

  /**
   * {@code sum over r of weight[r] * exp(beta * scores[r] - shift)}, each term in float: within
   * float rounding of the exact sum (the Vector API's exponential and the scalar one may differ in
   * the last bit).
   */
  public static double expSum(float[] scores, float[] weight, float beta, float shift) {
    if (VectorMath.VECTORIZED) {
      return VectorizedTiles.expSum(scores, weight, beta, shift);
    }
    return scalarExpSum(scores, weight, beta, shift);
  }

  static double scalarExpSum(float[] scores, float[] weight, float beta, float shift) {
    double sum = 0;
    for (int r = 0; r < ROWS; r++) {
      if (weight[r] > 0) {
        sum += weight[r] * (float) Math.exp(beta * scores[r] - shift);
      }
    }
    return sum;
  }

  /**
   * The first row from {@code from} on with {@code weight[r] > 0} and {@code scores[r] > bound};
   * {@link #ROWS} if none.
   */
  public static int firstAbove(float[] scores, float[] weight, float bound, int from) {
    if (VectorMath.VECTORIZED) {
      return VectorizedTiles.firstAbove(scores, weight, bound, from);
    }
    return scalarFirstAbove(scores, weight, bound, from);
  }

  static int scalarFirstAbove(float[] scores, float[] weight, float bound, int from) {
    for (int r = from; r < ROWS; r++) {
      if (weight[r] > 0 && scores[r] > bound) {
        return r;
      }
    }
    return ROWS;
  }
}
