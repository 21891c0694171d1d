package io.dynnibal.index;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link VectorMath}'s inner products on the Vector API, the same bits as its scalar loops: eight
 * float lanes, lane {@code j} the scalar loop's partial sum {@code s_j} (the coordinates {@code i
 * mod 8 = j}, each product rounded to float and added in the same order; lanes past the end load
 * zeros, and adding a zero leaves a sum as it was), the lanes added pairwise at the end. Loaded
 * only when the JVM has {@code jdk.incubator.vector}.
 */
final class VectorizedKernels {
  private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_256;
  private static final VectorSpecies<Byte> BYTES = ByteVector.SPECIES_64;
  private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_256;

  private VectorizedKernels() {}

  /** Whether the processor runs 256-bit vectors natively (else the scalar loop is faster). */
  static boolean usable() {
    return FloatVector.SPECIES_PREFERRED.vectorBitSize() >= FLOATS.vectorBitSize();
  }

  static double dot(float[] a, float[] b) {
    return dot(a, b, 0);
  }

  static double dot(float[] x, byte[] codes, int offset, float scale) {
    int n = x.length;
    FloatVector sums = FloatVector.zero(FLOATS);
    int i = 0;
    for (int end = FLOATS.loopBound(n); i < end; i += FLOATS.length()) {
      sums = sums.add(FloatVector.fromArray(FLOATS, x, i).mul(codesAt(codes, offset + i)));
    }
    if (i < n) {
      FloatVector c = codesAt(codes, offset + i, BYTES.indexInRange(i, n));
      sums = sums.add(FloatVector.fromArray(FLOATS, x, i, FLOATS.indexInRange(i, n)).mul(c));
    }
    return scale * pairwise(sums);
  }

  /** {@link VectorMath#dots}: four vectors at a time, each lane as in {@link #dot}. */
  static void dots(
      float[] x, byte[] codes, int offset, float[] scales, int first, int count, double[] out) {
    int n = x.length;
    int bound = FLOATS.loopBound(n);
    int k = 0;
    for (; k + 4 <= count; k += 4) {
      int o0 = offset + k * n;
      int o1 = o0 + n;
      int o2 = o1 + n;
      int o3 = o2 + n;
      FloatVector s0 = FloatVector.zero(FLOATS);
      FloatVector s1 = s0;
      FloatVector s2 = s0;
      FloatVector s3 = s0;
      int i = 0;
      for (; i < bound; i += FLOATS.length()) {
        FloatVector q = FloatVector.fromArray(FLOATS, x, i);
        s0 = s0.add(q.mul(codesAt(codes, o0 + i)));
        s1 = s1.add(q.mul(codesAt(codes, o1 + i)));
        s2 = s2.add(q.mul(codesAt(codes, o2 + i)));
        s3 = s3.add(q.mul(codesAt(codes, o3 + i)));
      }
      if (i < n) {
        var floats = FLOATS.indexInRange(i, n);
        var bytes = BYTES.indexInRange(i, n);
        FloatVector q = FloatVector.fromArray(FLOATS, x, i, floats);
        s0 = s0.add(q.mul(codesAt(codes, o0 + i, bytes)));
        s1 = s1.add(q.mul(codesAt(codes, o1 + i, bytes)));
        s2 = s2.add(q.mul(codesAt(codes, o2 + i, bytes)));
        s3 = s3.add(q.mul(codesAt(codes, o3 + i, bytes)));
      }
      out[k] = scales[first + k] * pairwise(s0);
      out[k + 1] = scales[first + k + 1] * pairwise(s1);
      out[k + 2] = scales[first + k + 2] * pairwise(s2);
      out[k + 3] = scales[first + k + 3] * pairwise(s3);
    }
    for (; k < count; k++) {
      out[k] = dot(x, codes, offset + k * n, scales[first + k]);
    }
  }

  /** Rows per tile of {@link #dotsAll}: 64 KB of rows at d' = 64, within a first-level cache. */
  private static final int TILE_FLOATS = 1 << 14;

  /**
   * {@link VectorMath#dotsAll}: per tile of rows, four queries at a time, each lane as in {@link
   * #dot}.
   */
  static void dotsAll(float[][] queries, float[] rows, int dim, float[][] out) {
    int n = rows.length / dim;
    int tile = Math.max(1, TILE_FLOATS / dim);
    for (int first = 0; first < n; first += tile) {
      int last = Math.min(n, first + tile);
      int q = 0;
      for (; q + 4 <= queries.length; q += 4) {
        fourQueries(queries, q, rows, dim, first, last, out);
      }
      for (; q < queries.length; q++) {
        for (int r = first; r < last; r++) {
          out[q][r] = (float) dot(queries[q], rows, r * dim);
        }
      }
    }
  }

  private static void fourQueries(
      float[][] queries, int q, float[] rows, int dim, int first, int last, float[][] out) {
    float[] a0 = queries[q];
    float[] a1 = queries[q + 1];
    float[] a2 = queries[q + 2];
    float[] a3 = queries[q + 3];
    int bound = FLOATS.loopBound(dim);
    var inRange = FLOATS.indexInRange(bound, dim);
    float[] lanes = new float[32];
    for (int r = first; r < last; r++) {
      int o = r * dim;
      FloatVector s0 = FloatVector.zero(FLOATS);
      FloatVector s1 = s0;
      FloatVector s2 = s0;
      FloatVector s3 = s0;
      int i = 0;
      for (; i < bound; i += FLOATS.length()) {
        FloatVector v = FloatVector.fromArray(FLOATS, rows, o + i);
        s0 = s0.add(FloatVector.fromArray(FLOATS, a0, i).mul(v));
        s1 = s1.add(FloatVector.fromArray(FLOATS, a1, i).mul(v));
        s2 = s2.add(FloatVector.fromArray(FLOATS, a2, i).mul(v));
        s3 = s3.add(FloatVector.fromArray(FLOATS, a3, i).mul(v));
      }
      if (i < dim) {
        FloatVector v = FloatVector.fromArray(FLOATS, rows, o + i, inRange);
        s0 = s0.add(FloatVector.fromArray(FLOATS, a0, i, inRange).mul(v));
        s1 = s1.add(FloatVector.fromArray(FLOATS, a1, i, inRange).mul(v));
        s2 = s2.add(FloatVector.fromArray(FLOATS, a2, i, inRange).mul(v));
        s3 = s3.add(FloatVector.fromArray(FLOATS, a3, i, inRange).mul(v));
      }
      // Stored, then added pairwise: one store per vector instead of eight lane extractions.
      s0.intoArray(lanes, 0);
      s1.intoArray(lanes, 8);
      s2.intoArray(lanes, 16);
      s3.intoArray(lanes, 24);
      out[q][r] = (float) pairwise(lanes, 0);
      out[q + 1][r] = (float) pairwise(lanes, 8);
      out[q + 2][r] = (float) pairwise(lanes, 16);
      out[q + 3][r] = (float) pairwise(lanes, 24);
    }
  }

  private static double pairwise(float[] lanes, int at) {
    return VectorMath.pairwise(
        lanes[at],
        lanes[at + 1],
        lanes[at + 2],
        lanes[at + 3],
        lanes[at + 4],
        lanes[at + 5],
        lanes[at + 6],
        lanes[at + 7]);
  }

  /** {@link #dot(float[], float[])} against {@code rows[offset]} onwards. */
  static double dot(float[] a, float[] rows, int offset) {
    int n = a.length;
    FloatVector sums = FloatVector.zero(FLOATS);
    int i = 0;
    for (int end = FLOATS.loopBound(n); i < end; i += FLOATS.length()) {
      sums =
          sums.add(
              FloatVector.fromArray(FLOATS, a, i)
                  .mul(FloatVector.fromArray(FLOATS, rows, offset + i)));
    }
    if (i < n) {
      var inRange = FLOATS.indexInRange(i, n);
      sums =
          sums.add(
              FloatVector.fromArray(FLOATS, a, i, inRange)
                  .mul(FloatVector.fromArray(FLOATS, rows, offset + i, inRange)));
    }
    return pairwise(sums);
  }

  /** Eight codes from {@code at} on, as floats (the tiles widen theirs with it too). */
  static FloatVector codesAt(byte[] codes, int at) {
    return (FloatVector)
        ByteVector.fromArray(BYTES, codes, at).convertShape(VectorOperators.B2F, FLOATS, 0);
  }

  private static FloatVector codesAt(byte[] codes, int at, VectorMask<Byte> inRange) {
    return (FloatVector)
        ByteVector.fromArray(BYTES, codes, at, inRange)
            .convertShape(VectorOperators.B2F, FLOATS, 0);
  }

  /**
   * {@link VectorMath#scalarSquaredDistance} from 0, eight coordinates at a time in int lanes: the
   * caller makes sure the whole sum fits in an int, so no lane overflows.
   */
  static long squaredDistance(byte[] a, byte[] b, int shift) {
    IntVector sums = IntVector.zero(INTS);
    int i = 0;
    for (int end = INTS.loopBound(a.length); i < end; i += INTS.length()) {
      IntVector x =
          (IntVector) ByteVector.fromArray(BYTES, a, i).convertShape(VectorOperators.B2I, INTS, 0);
      IntVector y =
          (IntVector) ByteVector.fromArray(BYTES, b, i).convertShape(VectorOperators.B2I, INTS, 0);
      IntVector d = x.lanewise(VectorOperators.LSHL, shift).sub(y);
      sums = sums.add(d.mul(d));
    }
    return sums.reduceLanes(VectorOperators.ADD) + VectorMath.scalarSquaredDistance(a, b, shift, i);
  }

  private static double pairwise(FloatVector sums) {
    return VectorMath.pairwise(
        sums.lane(0),
        sums.lane(1),
        sums.lane(2),
        sums.lane(3),
        sums.lane(4),
        sums.lane(5),
        sums.lane(6),
        sums.lane(7));
  }
}
