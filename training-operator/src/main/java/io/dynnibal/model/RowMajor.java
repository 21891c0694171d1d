package io.dynnibal.model;

/** Rows of vectors as one row-major array: what an NDArray of shape (rows, dim) is created from. */
public final class RowMajor {
  private RowMajor() {}

  /** Rows {@code from} (inclusive) to {@code to} (exclusive), each of length {@code dim}. */
  public static float[] flatten(float[][] rows, int from, int to, int dim) {
    float[] flat = new float[(to - from) * dim];
    for (int i = from; i < to; i++) {
      if (rows[i].length != dim) {
        throw new IllegalArgumentException(
            "row " + i + " has dimension " + rows[i].length + ", not " + dim);
      }
      System.arraycopy(rows[i], 0, flat, (i - from) * dim, dim);
    }
    return flat;
  }

  public static float[] flatten(float[][] rows, int dim) {
    return flatten(rows, 0, rows.length, dim);
  }
}
