package io.dynnibal.index;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
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

  private VectorizedKernels() {}

  /** Whether the processor runs 256-bit vectors natively (else the scalar loop is faster). */
  static boolean usable() {
    return FloatVector.SPECIES_PREFERRED.vectorBitSize() >= FLOATS.vectorBitSize();
  }

  static double dot(float[] a, float[] b) {
    int n = a.length;
    FloatVector sums = FloatVector.zero(FLOATS);
    int i = 0;
    for (int end = FLOATS.loopBound(n); i < end; i += FLOATS.length()) {
      sums = sums.add(FloatVector.fromArray(FLOATS, a, i).mul(FloatVector.fromArray(FLOATS, b, i)));
    }
    if (i < n) {
      var inRange = FLOATS.indexInRange(i, n);
      sums =
          sums.add(
              FloatVector.fromArray(FLOATS, a, i, inRange)
                  .mul(FloatVector.fromArray(FLOATS, b, i, inRange)));
    }
    return pairwise(sums);
  }

  static double dot(float[] x, byte[] codes, float scale) {
    int n = x.length;
    FloatVector sums = FloatVector.zero(FLOATS);
    int i = 0;
    for (int end = FLOATS.loopBound(n); i < end; i += FLOATS.length()) {
      FloatVector c =
          (FloatVector)
              ByteVector.fromArray(BYTES, codes, i).convertShape(VectorOperators.B2F, FLOATS, 0);
      sums = sums.add(FloatVector.fromArray(FLOATS, x, i).mul(c));
    }
    if (i < n) {
      FloatVector c =
          (FloatVector)
              ByteVector.fromArray(BYTES, codes, i, BYTES.indexInRange(i, n))
                  .convertShape(VectorOperators.B2F, FLOATS, 0);
      sums = sums.add(FloatVector.fromArray(FLOATS, x, i, FLOATS.indexInRange(i, n)).mul(c));
    }
    return scale * pairwise(sums);
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
