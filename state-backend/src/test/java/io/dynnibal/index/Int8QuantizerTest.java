package io.dynnibal.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.sgtree.SgTree;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class Int8QuantizerTest {

  /** Gaussian coordinates of one magnitude per vector, from 1e-6 to 1e4. */
  private static float[] randomVector(int dimension, SplittableRandom random) {
    double magnitude = Math.pow(10, random.nextInt(-6, 5));
    float[] v = new float[dimension];
    for (int i = 0; i < dimension; i++) {
      v[i] = (float) (random.nextGaussian() * magnitude);
    }
    return v;
  }

  private static double largest(float[] v) {
    double max = 0;
    for (float x : v) {
      max = Math.max(max, Math.abs(x));
    }
    return max;
  }

  @Test
  void eachCoordinateIsWithinHalfAStepOfAPowerOfTwoScale() {
    SplittableRandom random = new SplittableRandom(1);
    for (int trial = 0; trial < 2_000; trial++) {
      float[] v = randomVector(1 + random.nextInt(80), random);
      float scale = Int8Quantizer.scaleFor(v);
      assertEquals(
          1, Integer.bitCount(Float.floatToIntBits(scale) & 0x7fffff) + 1, "2^e: " + scale);
      assertTrue(127 * (double) scale >= largest(v), "the codes reach the largest coordinate");
      assertTrue(63.5 * scale < largest(v), "the smallest such power of two");
      float[] snapped = Int8Quantizer.snap(v);
      for (int i = 0; i < v.length; i++) {
        assertTrue(Math.abs(snapped[i] - v[i]) <= scale / 2, "coordinate " + i);
        assertTrue(Math.abs(snapped[i] - v[i]) <= largest(v) / 127, "coordinate " + i);
      }
    }
  }

  /** What the tree relies on when it takes a node's vector out and places it again. */
  @Test
  void aSnappedVectorSnapsToItself() {
    SplittableRandom random = new SplittableRandom(2);
    for (int trial = 0; trial < 2_000; trial++) {
      float[] snapped = Int8Quantizer.snap(randomVector(1 + random.nextInt(80), random));
      assertArrayEquals(snapped, Int8Quantizer.snap(snapped));
      assertEquals(Int8Quantizer.scaleFor(snapped), Int8Quantizer.scaleFor(snapped.clone()));
    }
  }

  @Test
  void theZeroVectorStaysZeroAndNonFiniteValuesAreRefused() {
    assertArrayEquals(new float[5], Int8Quantizer.snap(new float[5]));
    assertThrows(
        IllegalArgumentException.class, () -> Int8Quantizer.scaleFor(new float[] {1, Float.NaN}));
    assertThrows(
        IllegalArgumentException.class,
        () -> Int8Quantizer.scaleFor(new float[] {Float.NEGATIVE_INFINITY}));
  }

  /**
   * The coded kernels give what the float kernels give on the decoded vectors, bit for bit, at
   * every length (whole lanes and the tails): a score or distance does not depend on the path that
   * computed it.
   */
  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3, 4, 5, 7, 8, 13, 64, 67})
  void codedKernelsAreTheFloatKernelsOnTheDecodedVectorsBitForBit(int dimension) {
    SplittableRandom random = new SplittableRandom(dimension);
    float[] a = randomVector(dimension, random);
    float[] b = randomVector(dimension, random);
    Coded codedA = Coded.of(a);
    Coded codedB = Coded.of(b);
    float[] decodedA = Int8Quantizer.snap(a);
    float[] decodedB = Int8Quantizer.snap(b);
    float[] x = randomVector(dimension, random);
    assertBits(VectorMath.dot(x, decodedA), VectorMath.dot(x, codedA.codes, codedA.scale));
    assertBits(VectorMath.distance(decodedA, decodedB), codedA.distanceTo(codedB));
    float[][] xs = new float[9][];
    for (int k = 0; k < xs.length; k++) {
      xs[k] = randomVector(dimension, random);
    }
    // A node's inner products read its codes without decoding them: its dot is the decoded one's.
    SgTree tree = new SgTree(dimension, 1.3);
    tree.insert(0, a);
    for (int k = 0; k < xs.length; k++) {
      assertBits(VectorMath.dot(xs[k], decodedA), tree.nodeOf(0).dot(xs[k]));
    }
  }

  /**
   * Two coded vectors' distance, whether summed in integers (scales up to 2^16 apart at d' = 64) or
   * in doubles (further apart), is the decoded vectors' distance bit for bit, in either order.
   */
  @ParameterizedTest
  @ValueSource(ints = {1, 5, 64, 128, 4096})
  void theDistanceOfTwoCodedVectorsIsTheirDecodedDistanceAtAnyRatioOfScales(int dimension) {
    SplittableRandom random = new SplittableRandom(dimension + 100);
    for (int trial = 0; trial < 300; trial++) {
      float[] a = randomVector(dimension, random);
      float[] b = a.clone();
      float apart = (float) Math.pow(2, random.nextInt(0, 30)) * (random.nextBoolean() ? 1 : -1);
      for (int i = 0; i < dimension; i++) {
        b[i] = (float) (b[i] / apart + random.nextGaussian() * Math.abs(b[i]) * 0.1);
      }
      double decoded = VectorMath.distance(Int8Quantizer.snap(a), Int8Quantizer.snap(b));
      assertBits(decoded, Coded.of(a).distanceTo(Coded.of(b)));
      assertBits(decoded, Coded.of(b).distanceTo(Coded.of(a)));
    }
  }

  /** A vector's codes and scale. */
  private record Coded(byte[] codes, float scale) {
    static Coded of(float[] v) {
      float scale = Int8Quantizer.scaleFor(v);
      byte[] codes = new byte[v.length];
      Int8Quantizer.encode(v, scale, codes);
      return new Coded(codes, scale);
    }

    double distanceTo(Coded other) {
      return VectorMath.distance(codes, scale, other.codes, other.scale);
    }
  }

  private static void assertBits(double expected, double actual) {
    assertEquals(Double.doubleToLongBits(expected), Double.doubleToLongBits(actual));
  }
}
