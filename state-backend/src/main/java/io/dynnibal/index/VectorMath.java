package io.dynnibal.index;

/**
 * The two kernels of the index. Accumulated in double so distances and bounds agree across code
 * paths.
 */
public final class VectorMath {
  private VectorMath() {}

  /**
   * Four independent accumulators: a single running sum makes every addition wait for the previous
   * one, and the JIT may not reorder floating-point additions itself. About 3x faster at d' = 128.
   */
  public static double dot(float[] a, float[] b) {
    double s0 = 0;
    double s1 = 0;
    double s2 = 0;
    double s3 = 0;
    int i = 0;
    for (int end = a.length - 3; i < end; i += 4) {
      s0 += (double) a[i] * b[i];
      s1 += (double) a[i + 1] * b[i + 1];
      s2 += (double) a[i + 2] * b[i + 2];
      s3 += (double) a[i + 3] * b[i + 3];
    }
    for (; i < a.length; i++) {
      s0 += (double) a[i] * b[i];
    }
    return (s0 + s1) + (s2 + s3);
  }

  public static double distance(float[] a, float[] b) {
    double s0 = 0;
    double s1 = 0;
    double s2 = 0;
    double s3 = 0;
    int i = 0;
    for (int end = a.length - 3; i < end; i += 4) {
      double d0 = (double) a[i] - b[i];
      double d1 = (double) a[i + 1] - b[i + 1];
      double d2 = (double) a[i + 2] - b[i + 2];
      double d3 = (double) a[i + 3] - b[i + 3];
      s0 += d0 * d0;
      s1 += d1 * d1;
      s2 += d2 * d2;
      s3 += d3 * d3;
    }
    for (; i < a.length; i++) {
      double d = (double) a[i] - b[i];
      s0 += d * d;
    }
    return Math.sqrt((s0 + s1) + (s2 + s3));
  }

  /**
   * The distance from the inner product and both squared norms: one pass over the vectors instead
   * of two.
   */
  public static double distanceFromDot(double dot, double squaredNormA, double squaredNormB) {
    return Math.sqrt(Math.max(0, squaredNormA + squaredNormB - 2 * dot));
  }

  /** Whether every component is finite (no NaN, no infinity). */
  public static boolean isFinite(float[] v) {
    for (float x : v) {
      if (!Float.isFinite(x)) {
        return false;
      }
    }
    return true;
  }

  public static double norm(float[] a) {
    return Math.sqrt(dot(a, a));
  }

  public static double cosine(float[] a, float[] b) {
    return dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));
  }
}
