package io.dynnibal.index;

/** The two kernels of the index. Accumulated in double so distances and bounds agree across code paths. */
public final class VectorMath {
  private VectorMath() {}

  public static double dot(float[] a, float[] b) {
    double sum = 0;
    for (int i = 0; i < a.length; i++) {
      sum += (double) a[i] * b[i];
    }
    return sum;
  }

  public static double distance(float[] a, float[] b) {
    double sum = 0;
    for (int i = 0; i < a.length; i++) {
      double diff = (double) a[i] - b[i];
      sum += diff * diff;
    }
    return Math.sqrt(sum);
  }

  public static double norm(float[] a) {
    return Math.sqrt(dot(a, a));
  }
}
