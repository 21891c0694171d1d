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

  /**
   * {@code out[offset + (k - from) * stride] = dot(xs[k], v)} for {@code from <= k < to}: one
   * vector against many, bit for bit what {@link #dot} gives (the same four partial sums per pair,
   * added in the same order). Two of the {@code xs} at a time share each load of {@code v}, and
   * their eight partial sums keep the processor busy while one pair's additions wait for each
   * other.
   */
  public static void dots(
      float[] v, float[][] xs, int from, int to, double[] out, int offset, int stride) {
    int n = v.length;
    int k = from;
    for (; k + 1 < to; k += 2) {
      float[] a = xs[k];
      float[] b = xs[k + 1];
      double a0 = 0;
      double a1 = 0;
      double a2 = 0;
      double a3 = 0;
      double b0 = 0;
      double b1 = 0;
      double b2 = 0;
      double b3 = 0;
      int i = 0;
      for (int end = n - 3; i < end; i += 4) {
        double v0 = v[i];
        double v1 = v[i + 1];
        double v2 = v[i + 2];
        double v3 = v[i + 3];
        a0 += a[i] * v0;
        a1 += a[i + 1] * v1;
        a2 += a[i + 2] * v2;
        a3 += a[i + 3] * v3;
        b0 += b[i] * v0;
        b1 += b[i + 1] * v1;
        b2 += b[i + 2] * v2;
        b3 += b[i + 3] * v3;
      }
      for (; i < n; i++) {
        a0 += a[i] * (double) v[i];
        b0 += b[i] * (double) v[i];
      }
      out[offset + (k - from) * stride] = (a0 + a1) + (a2 + a3);
      out[offset + (k + 1 - from) * stride] = (b0 + b1) + (b2 + b3);
    }
    for (; k < to; k++) {
      out[offset + (k - from) * stride] = dot(xs[k], v);
    }
  }

  /**
   * {@code dot(x, v)} for the vector {@code v} the codes stand for ({@link Int8Quantizer}), bit for
   * bit. The power-of-two scale is applied once to the sum: each term {@code x[i] * code[i]} is
   * exact in double (24 by 8 bits), and scaling every term of a sum by a power of two scales each
   * rounding of it the same way, so this equals summing {@code x[i] * (code[i] * scale)}, one
   * multiplication per coordinate fewer.
   */
  public static double dot(float[] x, byte[] codes, float scale) {
    double s0 = 0;
    double s1 = 0;
    double s2 = 0;
    double s3 = 0;
    int i = 0;
    for (int end = x.length - 3; i < end; i += 4) {
      s0 += (double) x[i] * codes[i];
      s1 += (double) x[i + 1] * codes[i + 1];
      s2 += (double) x[i + 2] * codes[i + 2];
      s3 += (double) x[i + 3] * codes[i + 3];
    }
    for (; i < x.length; i++) {
      s0 += (double) x[i] * codes[i];
    }
    return scale * ((s0 + s1) + (s2 + s3));
  }

  /**
   * {@code |v|^2} of the vector the codes stand for: exact (an integer sum times the square of a
   * power of two), so it equals {@code dot(v, codes, scale)} bit for bit.
   */
  public static double squaredNorm(byte[] codes, float scale) {
    long sum = 0;
    for (byte c : codes) {
      sum += c * c;
    }
    return (double) scale * scale * sum;
  }

  /**
   * {@code distance} between two coded vectors, bit for bit what their decoded floats give: in
   * units of {@code scaleB} every difference {@code code_a * (scaleA / scaleB) - code_b} is exact,
   * and a power of two taken out of a sum of squares and a square root comes back out exactly. When
   * the scales are close (the common case: cached vectors have similar norms) the sum is taken in
   * integers, without a conversion to double per coordinate; the tree's builds and repairs compute
   * most of their distances here.
   */
  public static double distance(byte[] a, float scaleA, byte[] b, float scaleB) {
    if (scaleA < scaleB) {
      return distance(b, scaleB, a, scaleA); // the same sum of squares
    }
    int shift = Math.getExponent(scaleA) - Math.getExponent(scaleB);
    if (shift <= 23 && Math.getExponent(scaleB) >= Float.MIN_EXPONENT) {
      long largest = (127L << shift) + 127; // the largest difference, in units of scaleB
      if (largest * largest <= (1L << 53) / a.length) {
        // In integers: every difference, square and partial sum stays below 2^53, so the double
        // sums below would be exact too, and both give the same value.
        long sum = 0;
        for (int i = 0; i < a.length; i++) {
          int d = (a[i] << shift) - b[i];
          sum += (long) d * d;
        }
        return scaleB * Math.sqrt((double) sum);
      }
    }
    double ratio = (double) scaleA / scaleB;
    double s0 = 0;
    double s1 = 0;
    double s2 = 0;
    double s3 = 0;
    int i = 0;
    for (int end = a.length - 3; i < end; i += 4) {
      double d0 = a[i] * ratio - b[i];
      double d1 = a[i + 1] * ratio - b[i + 1];
      double d2 = a[i + 2] * ratio - b[i + 2];
      double d3 = a[i + 3] * ratio - b[i + 3];
      s0 += d0 * d0;
      s1 += d1 * d1;
      s2 += d2 * d2;
      s3 += d3 * d3;
    }
    for (; i < a.length; i++) {
      double d = a[i] * ratio - b[i];
      s0 += d * d;
    }
    return scaleB * Math.sqrt((s0 + s1) + (s2 + s3));
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
