package io.dynnibal.index;

/**
 * The kernels of the index. Inner products are summed in float in eight partial sums (coordinate
 * {@code i} into sum {@code i mod 8}, added pairwise at the end), the same way on every path (float
 * or coded vectors, scalar loop or Vector API), so a score never depends on the path that computed
 * it; distances are accumulated in double so bounds agree across code paths.
 */
public final class VectorMath {
  /**
   * Whether the inner products run on the Vector API: when the JVM has {@code jdk.incubator.vector}
   * (the CLI's launcher, the clusters it starts and the tests add it) on a processor with 256-bit
   * vectors. The coded product, {@link #dot(float[], byte[], float)}, is most of the index's work
   * when it samples: FindClustering scores every child of each node it splits, the proposal the
   * targets of the small clusters near the query. Both kernels give the same bits, so the switch
   * changes speed only; other modules' kernels follow it too, so one process takes one path. {@code
   * -Ddynnibal.scalar.kernels=true} forces the scalar loops.
   */
  public static final boolean VECTORIZED = vectorApiUsable();

  private VectorMath() {}

  private static boolean vectorApiUsable() {
    if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()
        || Boolean.getBoolean("dynnibal.scalar.kernels")) {
      return false;
    }
    try {
      return VectorizedKernels.usable();
    } catch (LinkageError e) {
      return false;
    }
  }

  /**
   * Eight independent partial sums: a single running sum makes every addition wait for the previous
   * one, and the JIT may not reorder floating-point additions itself; eight float lanes are also
   * what one 256-bit vector holds. Float sums are exact enough for scores and fit twice as many to
   * a vector as doubles.
   */
  public static double dot(float[] a, float[] b) {
    return VECTORIZED ? VectorizedKernels.dot(a, b) : scalarDot(a, b);
  }

  /**
   * Every query against every row of a row-major matrix of {@code rows.length / dim} rows: {@code
   * out[q][r] = dot(queries[q], row r)}, bit for bit as {@link #dot(float[], float[])}. Rows are
   * taken in tiles that stay in the first-level cache and each row is loaded once for four queries:
   * scoring every target of a cache for a batch of queries at memory speed, the exact peer of the
   * index.
   */
  public static void dotsAll(float[][] queries, float[] rows, int dim, float[][] out) {
    if (rows.length % dim != 0) {
      throw new IllegalArgumentException(rows.length + " floats are not rows of " + dim);
    }
    for (float[] q : queries) {
      if (q.length != dim) {
        throw new IllegalArgumentException("a query of " + q.length + " floats, rows of " + dim);
      }
    }
    if (VECTORIZED) {
      VectorizedKernels.dotsAll(queries, rows, dim, out);
      return;
    }
    int n = rows.length / dim;
    for (int q = 0; q < queries.length; q++) {
      for (int r = 0; r < n; r++) {
        out[q][r] = (float) scalarDot(queries[q], rows, r * dim);
      }
    }
  }

  /** {@link #dot(float[], float[])}'s scalar loop. */
  static double scalarDot(float[] a, float[] b) {
    return scalarDot(a, b, 0);
  }

  /** The scalar loop against {@code b[offset]} to {@code b[offset + a.length - 1]}. */
  static double scalarDot(float[] a, float[] rows, int offset) {
    float s0 = 0;
    float s1 = 0;
    float s2 = 0;
    float s3 = 0;
    float s4 = 0;
    float s5 = 0;
    float s6 = 0;
    float s7 = 0;
    int n = a.length;
    int i = 0;
    for (int end = n & ~7; i < end; i += 8) {
      s0 += a[i] * rows[offset + i];
      s1 += a[i + 1] * rows[offset + i + 1];
      s2 += a[i + 2] * rows[offset + i + 2];
      s3 += a[i + 3] * rows[offset + i + 3];
      s4 += a[i + 4] * rows[offset + i + 4];
      s5 += a[i + 5] * rows[offset + i + 5];
      s6 += a[i + 6] * rows[offset + i + 6];
      s7 += a[i + 7] * rows[offset + i + 7];
    }
    // The tail, at most seven coordinates, into the sums of their lanes.
    int tail = n - i;
    if (tail > 0) s0 += a[i] * rows[offset + i];
    if (tail > 1) s1 += a[i + 1] * rows[offset + i + 1];
    if (tail > 2) s2 += a[i + 2] * rows[offset + i + 2];
    if (tail > 3) s3 += a[i + 3] * rows[offset + i + 3];
    if (tail > 4) s4 += a[i + 4] * rows[offset + i + 4];
    if (tail > 5) s5 += a[i + 5] * rows[offset + i + 5];
    if (tail > 6) s6 += a[i + 6] * rows[offset + i + 6];
    return pairwise(s0, s1, s2, s3, s4, s5, s6, s7);
  }

  /** The eight partial sums added pairwise, in the order every kernel adds them. */
  static double pairwise(
      float s0, float s1, float s2, float s3, float s4, float s5, float s6, float s7) {
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
  }

  /**
   * {@code dot(x, v)} for the vector {@code v} the codes stand for ({@link Int8Quantizer}), bit for
   * bit. The power-of-two scale is applied once to the sum: scaling every term of a sum by a power
   * of two scales each rounding of it the same way, so this equals summing {@code x[i] * (code[i] *
   * scale)}, one multiplication per coordinate fewer.
   */
  public static double dot(float[] x, byte[] codes, float scale) {
    return dot(x, codes, 0, scale);
  }

  /**
   * {@link #dot(float[], byte[], float)} for the codes at {@code codes[offset]} to {@code
   * codes[offset + x.length - 1]}: one vector of many kept back to back in one array.
   */
  public static double dot(float[] x, byte[] codes, int offset, float scale) {
    return VECTORIZED
        ? VectorizedKernels.dot(x, codes, offset, scale)
        : scalarDot(x, codes, offset, scale);
  }

  /**
   * {@code out[k] = dot(x, codes, offset + k * x.length, scales[first + k])} for {@code k < count}:
   * the inner products of one query with vectors kept back to back (a node's children in a
   * snapshot), bit for bit. The vector kernel runs four at once: each load of the query serves four
   * vectors' codes, and four independent sums keep the core busy where one inner product at a time
   * waits on its own chain of additions.
   */
  public static void dots(
      float[] x, byte[] codes, int offset, float[] scales, int first, int count, double[] out) {
    if (VECTORIZED) {
      VectorizedKernels.dots(x, codes, offset, scales, first, count, out);
      return;
    }
    for (int k = 0; k < count; k++) {
      out[k] = scalarDot(x, codes, offset + k * x.length, scales[first + k]);
    }
  }

  /**
   * {@code out[i] = sum over j < v.length of m[i * rowStep + j * columnStep] * v[j]} for {@code i <
   * out.length}, each sum in double in the order of {@code j}, rounded to float at the end: a
   * matrix (row-major with {@code rowStep = columns, columnStep = 1}, its transpose with the steps
   * swapped) times a vector. Four outputs at a time, each summed in the same order as alone (the
   * same bits): four independent chains of additions instead of one waiting on each.
   */
  public static void multiply(double[] m, int rowStep, int columnStep, float[] v, float[] out) {
    int n = v.length;
    int i = 0;
    for (; i + 4 <= out.length; i += 4) {
      double s0 = 0;
      double s1 = 0;
      double s2 = 0;
      double s3 = 0;
      int at = i * rowStep;
      for (int j = 0; j < n; j++, at += columnStep) {
        double x = v[j];
        s0 += m[at] * x;
        s1 += m[at + rowStep] * x;
        s2 += m[at + 2 * rowStep] * x;
        s3 += m[at + 3 * rowStep] * x;
      }
      out[i] = (float) s0;
      out[i + 1] = (float) s1;
      out[i + 2] = (float) s2;
      out[i + 3] = (float) s3;
    }
    for (; i < out.length; i++) {
      double s = 0;
      for (int j = 0, at = i * rowStep; j < n; j++, at += columnStep) {
        s += m[at] * v[j];
      }
      out[i] = (float) s;
    }
  }

  /** {@link #dot(float[], byte[], float)}'s scalar loop. */
  static double scalarDot(float[] x, byte[] codes, int offset, float scale) {
    float s0 = 0;
    float s1 = 0;
    float s2 = 0;
    float s3 = 0;
    float s4 = 0;
    float s5 = 0;
    float s6 = 0;
    float s7 = 0;
    int n = x.length;
    int o = offset;
    int i = 0;
    for (int end = n & ~7; i < end; i += 8) {
      s0 += x[i] * codes[o + i];
      s1 += x[i + 1] * codes[o + i + 1];
      s2 += x[i + 2] * codes[o + i + 2];
      s3 += x[i + 3] * codes[o + i + 3];
      s4 += x[i + 4] * codes[o + i + 4];
      s5 += x[i + 5] * codes[o + i + 5];
      s6 += x[i + 6] * codes[o + i + 6];
      s7 += x[i + 7] * codes[o + i + 7];
    }
    int tail = n - i;
    if (tail > 0) s0 += x[i] * codes[o + i];
    if (tail > 1) s1 += x[i + 1] * codes[o + i + 1];
    if (tail > 2) s2 += x[i + 2] * codes[o + i + 2];
    if (tail > 3) s3 += x[i + 3] * codes[o + i + 3];
    if (tail > 4) s4 += x[i + 4] * codes[o + i + 4];
    if (tail > 5) s5 += x[i + 5] * codes[o + i + 5];
    if (tail > 6) s6 += x[i + 6] * codes[o + i + 6];
    return scale * pairwise(s0, s1, s2, s3, s4, s5, s6, s7);
  }

  /**
   * {@code |v|^2} of the vector whose codes have {@link #squaredCodes} {@code squaredCodes}: exact
   * (an integer sum times the square of a power of two).
   */
  public static double squaredNorm(int squaredCodes, float scale) {
    return (double) scale * scale * squaredCodes;
  }

  /** {@code sum codes[i]^2}, exact below 133,000 coordinates. */
  public static int squaredCodes(byte[] codes) {
    int sum = 0;
    for (byte c : codes) {
      sum += c * c;
    }
    return sum;
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
        // sums below would be exact too, and both give the same value. An integer sum is the same
        // in any order, so eight lanes at a time give it too where it fits in an int.
        long sum =
            VECTORIZED && largest * largest * a.length < Integer.MAX_VALUE
                ? VectorizedKernels.squaredDistance(a, b, shift)
                : scalarSquaredDistance(a, b, shift, 0);
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

  /** {@code sum over i >= from of ((a[i] << shift) - b[i])^2}, in integers. */
  static long scalarSquaredDistance(byte[] a, byte[] b, int shift, int from) {
    long sum = 0;
    for (int i = from; i < a.length; i++) {
      int d = (a[i] << shift) - b[i];
      sum += (long) d * d;
    }
    return sum;
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
