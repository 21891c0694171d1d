package io.dynnibal.index;

/**
 * Test vectors as an SG tree holds them: snapped to 8 bits per coordinate ({@link Int8Quantizer}).
 * A tree built from these keeps them exactly, so a test can compare its searches and samplers with
 * brute force and the exact softmax over the same arrays, bit for bit. What snapping does to a
 * vector is {@code Int8QuantizerTest}'s business.
 */
public final class TreeVectors {
  private TreeVectors() {}

  /** {@link ClusteredVectors#generate}, snapped. */
  public static float[][] clustered(int count, int dim, long seed) {
    return snapped(ClusteredVectors.generate(count, dim, seed));
  }

  /** Snapped copies. */
  public static float[][] snapped(float[][] vectors) {
    float[][] out = new float[vectors.length][];
    for (int i = 0; i < vectors.length; i++) {
      out[i] = Int8Quantizer.snap(vectors[i]);
    }
    return out;
  }
}
