package io.dynnibal.index.nystrom;

/**
 * A d' x d' map from every cached vector to its re-encoded successor, {@code z <- M z}: how Alg.
 * 4/5 moves the whole cache without materialising a full-dimensional vector for any target. Applied
 * in place, one vector at a time, so it streams over a cache of any size (RocksDB, or the tree's
 * own vectors).
 */
public final class CacheMap {
  private final int dimension;
  private final float[] matrix; // row-major

  public CacheMap(int dimension, float[] rowMajor) {
    if (rowMajor.length != dimension * dimension) {
      throw new IllegalArgumentException(
          "a "
              + dimension
              + " x "
              + dimension
              + " map needs "
              + dimension * dimension
              + " values, got "
              + rowMajor.length);
    }
    for (int i = 0; i < rowMajor.length; i++) {
      if (!Float.isFinite(rowMajor[i])) {
        throw new IllegalArgumentException("cache map has a non-finite value at " + i);
      }
    }
    this.dimension = dimension;
    this.matrix = rowMajor.clone();
  }

  public int dimension() {
    return dimension;
  }

  /** The map as row-major values (for a ModelUpdate). */
  public float[] rowMajor() {
    return matrix.clone();
  }

  /**
   * Replaces {@code z} by {@code M z}. {@code scratch} (length d') avoids an allocation per vector.
   *
   * @return how far the vector moved, {@code |M z - z|}: the maximum over the cache is the drift
   *     bound U of tree repair
   */
  public double applyInPlace(float[] z, float[] scratch) {
    double moved = 0;
    for (int i = 0; i < dimension; i++) {
      int row = i * dimension;
      double s0 = 0;
      double s1 = 0;
      double s2 = 0;
      double s3 = 0;
      int j = 0;
      for (int end = dimension - 3; j < end; j += 4) {
        s0 += (double) matrix[row + j] * z[j];
        s1 += (double) matrix[row + j + 1] * z[j + 1];
        s2 += (double) matrix[row + j + 2] * z[j + 2];
        s3 += (double) matrix[row + j + 3] * z[j + 3];
      }
      for (; j < dimension; j++) {
        s0 += (double) matrix[row + j] * z[j];
      }
      scratch[i] = (float) ((s0 + s1) + (s2 + s3));
      double diff = (double) scratch[i] - z[i];
      moved += diff * diff;
    }
    System.arraycopy(scratch, 0, z, 0, dimension);
    return Math.sqrt(moved);
  }
}
