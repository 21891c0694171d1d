package io.dynnibal.index;

/**
 * How the SG tree keeps a cached vector on the heap: one byte per coordinate and one scale per
 * vector, {@code x[i] = code[i] * scale}: about a quarter of the heap of float coordinates, per
 * target of a shard. The float cache stays in RocksDB; only the tree's copy is coarse.
 *
 * <p>The scale is the smallest power of two with {@code 127 * scale >= max |x[i]|}, which makes
 * quantization idempotent: a decoded vector encodes to the same codes and scale again ({@code max
 * |x| / scale > 63.5}, so the largest code is at least 64 and the same power of two is chosen). The
 * tree relies on it: a node's vector taken out and placed again (repair, re-insertion) lands where
 * it was, and a decoded vector ({@link #snap}) gives, in float arithmetic, exactly the values the
 * tree computes with. Each coordinate is off by at most {@code scale / 2 <= max |x| / 127}.
 */
public final class Int8Quantizer {
  private Int8Quantizer() {}

  /** The largest code; {@code -127..127} keeps the range symmetric. */
  public static final int MAX_CODE = 127;

  /**
   * The power-of-two scale for {@code x} (finite values): 1 for a zero vector.
   *
   * @throws IllegalArgumentException for a non-finite value
   */
  public static float scaleFor(float[] x) {
    float max = 0;
    for (float v : x) {
      if (!Float.isFinite(v)) {
        throw new IllegalArgumentException("cannot quantize a non-finite value: " + v);
      }
      max = Math.max(max, Math.abs(v));
    }
    if (max == 0) {
      return 1f;
    }
    int e = Math.getExponent(max / MAX_CODE);
    while (MAX_CODE * (double) Math.scalb(1f, e) < max) {
      e++;
    }
    while (MAX_CODE * (double) Math.scalb(1f, e - 1) >= max) {
      e--;
    }
    return Math.scalb(1f, e);
  }

  /** Writes {@code x}'s codes at {@code scale} ({@link #scaleFor}) into {@code codes}. */
  public static void encode(float[] x, float scale, byte[] codes) {
    for (int i = 0; i < x.length; i++) {
      codes[i] = (byte) Math.round(x[i] / scale);
    }
  }

  /** Writes the decoded vector into {@code out}. */
  public static void decode(byte[] codes, float scale, float[] out) {
    for (int i = 0; i < codes.length; i++) {
      out[i] = codes[i] * scale;
    }
  }

  /** {@code x} as the tree keeps it: encoded and decoded (a new array). */
  public static float[] snap(float[] x) {
    float scale = scaleFor(x);
    byte[] codes = new byte[x.length];
    encode(x, scale, codes);
    float[] out = new float[x.length];
    decode(codes, scale, out);
    return out;
  }
}
