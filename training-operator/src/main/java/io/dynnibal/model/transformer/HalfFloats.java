package io.dynnibal.model.transformer;

/**
 * IEEE 754 half precision (binary16) for Java 17, which has no {@code Float.floatToFloat16}: 1 sign
 * bit, 5 exponent bits, 10 mantissa bits; round to nearest, ties to even. A normal value keeps a
 * relative error of at most 2^-11; magnitudes above 65,504 become infinite, below 2^-24 zero.
 */
public final class HalfFloats {
  private HalfFloats() {}

  /** The half nearest to {@code value}. */
  public static short fromFloat(float value) {
    int bits = Float.floatToRawIntBits(value);
    int sign = (bits >>> 16) & 0x8000;
    int magnitude = bits & 0x7fffffff;
    if (magnitude >= 0x7f800000) { // infinity or NaN
      return (short) (sign | 0x7c00 | (magnitude > 0x7f800000 ? 0x200 : 0));
    }
    int exponent = (magnitude >>> 23) - 127 + 15;
    int mantissa = magnitude & 0x7fffff;
    if (exponent >= 31) {
      return (short) (sign | 0x7c00);
    }
    if (exponent <= 0) { // subnormal half, or zero
      if (exponent < -10) {
        return (short) sign;
      }
      mantissa |= 0x800000;
      int shift = 14 - exponent;
      return (short) (sign | roundShift(mantissa, shift));
    }
    // A carry out of the mantissa moves the exponent up (to infinity past the largest half).
    return (short) (sign | ((exponent << 10) + roundShift(mantissa, 13)));
  }

  /** The float that {@code half} stands for (exact). */
  public static float toFloat(short half) {
    int h = half & 0xffff;
    int sign = (h & 0x8000) << 16;
    int exponent = (h >>> 10) & 0x1f;
    int mantissa = h & 0x3ff;
    if (exponent == 0x1f) {
      return Float.intBitsToFloat(sign | 0x7f800000 | (mantissa << 13));
    }
    if (exponent == 0) {
      if (mantissa == 0) {
        return Float.intBitsToFloat(sign);
      }
      float value = mantissa * 0x1p-24f;
      return sign == 0 ? value : -value;
    }
    return Float.intBitsToFloat(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
  }

  /** {@code value >> shift}, rounded to nearest with ties to even. */
  private static int roundShift(int value, int shift) {
    int kept = value >>> shift;
    int rest = value & ((1 << shift) - 1);
    int halfway = 1 << (shift - 1);
    if (rest > halfway || (rest == halfway && (kept & 1) == 1)) {
      kept++;
    }
    return kept;
  }
}
