package io.dynnibal.index.nystrom;

import org.ejml.data.DMatrixRMaj;

/**
 * Conversions between the cache's float rows and EJML's double matrices (the small solves run in
 * double).
 */
final class DenseMatrix {
  private DenseMatrix() {}

  static DMatrixRMaj of(float[][] rows) {
    int cols = rows[0].length;
    DMatrixRMaj m = new DMatrixRMaj(rows.length, cols);
    for (int i = 0; i < rows.length; i++) {
      if (rows[i].length != cols) {
        throw new IllegalArgumentException(
            "row " + i + " has " + rows[i].length + " values, row 0 has " + cols);
      }
      for (int j = 0; j < cols; j++) {
        m.unsafe_set(i, j, rows[i][j]);
      }
    }
    return m;
  }

  static float[] rowMajorFloats(DMatrixRMaj m) {
    float[] out = new float[m.numRows * m.numCols];
    for (int i = 0; i < out.length; i++) {
      out[i] = (float) m.data[i];
    }
    return out;
  }

  static void requireFinite(float[][] rows, String what) {
    for (int i = 0; i < rows.length; i++) {
      for (int j = 0; j < rows[i].length; j++) {
        if (!Float.isFinite(rows[i][j])) {
          throw new IllegalArgumentException(
              what + " row " + i + " has a non-finite value at " + j);
        }
      }
    }
  }
}
