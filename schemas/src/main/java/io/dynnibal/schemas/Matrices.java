package io.dynnibal.schemas;

import java.util.ArrayList;
import java.util.List;

/**
 * Between Avro {@link Matrix} records and float arrays; refuses non-finite values and wrong shapes.
 */
public final class Matrices {
  private Matrices() {}

  public static Matrix of(float[][] rows) {
    int cols = rows.length == 0 ? 0 : rows[0].length;
    List<Float> values = new ArrayList<>(rows.length * cols);
    for (float[] row : rows) {
      for (float v : row) {
        values.add(v);
      }
    }
    return Matrix.newBuilder().setRows(rows.length).setCols(cols).setValues(values).build();
  }

  public static Matrix of(int rows, int cols, float[] rowMajor) {
    List<Float> values = new ArrayList<>(rowMajor.length);
    for (float v : rowMajor) {
      values.add(v);
    }
    return Matrix.newBuilder().setRows(rows).setCols(cols).setValues(values).build();
  }

  public static float[] values(Matrix m, String what) {
    List<Float> values = m.getValues();
    if (m.getRows() < 0 || m.getCols() < 0 || values.size() != (long) m.getRows() * m.getCols()) {
      throw new IllegalArgumentException(
          what
              + " claims "
              + m.getRows()
              + " x "
              + m.getCols()
              + " but holds "
              + values.size()
              + " values");
    }
    float[] out = new float[values.size()];
    for (int i = 0; i < out.length; i++) {
      Float v = values.get(i);
      if (v == null || !Float.isFinite(v)) {
        throw new IllegalArgumentException(
            what + " holds a non-finite value (" + v + ") at index " + i);
      }
      out[i] = v;
    }
    return out;
  }

  public static float[][] rows(Matrix m, String what) {
    float[] flat = values(m, what);
    float[][] rows = new float[m.getRows()][m.getCols()];
    for (int r = 0; r < rows.length; r++) {
      System.arraycopy(flat, r * m.getCols(), rows[r], 0, m.getCols());
    }
    return rows;
  }
}
