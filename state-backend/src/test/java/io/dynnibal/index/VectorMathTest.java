package io.dynnibal.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class VectorMathTest {

  /** The tests run with the module (surefire's argLine): the vector kernel is the one tested. */
  @Test
  void theTestsRunTheVectorKernel() {
    assertTrue(
        VectorMath.VECTORIZED || !System.getProperty("os.arch").matches("amd64|x86_64"),
        "jdk.incubator.vector is missing from the test JVM");
  }

  /**
   * The inner products' vector kernels and scalar loops give the same bits at every length (whole
   * lanes and the tail), whatever the magnitudes: a score never depends on which kernel a JVM runs.
   */
  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 15, 16, 17, 63, 64, 65, 67, 128})
  void theVectorKernelsAreTheScalarLoopsBitForBit(int dimension) {
    SplittableRandom random = new SplittableRandom(dimension);
    for (int trial = 0; trial < 50; trial++) {
      float[] x = randomVector(dimension, random);
      float[] v = randomVector(dimension, random);
      float scale = Int8Quantizer.scaleFor(v);
      byte[] codes = new byte[dimension];
      Int8Quantizer.encode(v, scale, codes);
      assertEquals(
          Double.doubleToLongBits(VectorMath.scalarDot(x, codes, scale)),
          Double.doubleToLongBits(VectorMath.dot(x, codes, scale)),
          "trial " + trial);
      assertEquals(
          Double.doubleToLongBits(VectorMath.scalarDot(x, v)),
          Double.doubleToLongBits(VectorMath.dot(x, v)),
          "trial " + trial);
    }
  }

  private static float[] randomVector(int dimension, SplittableRandom random) {
    float[] v = new float[dimension];
    for (int i = 0; i < dimension; i++) {
      // Mixed magnitudes, so a different order of additions would round differently.
      v[i] = (float) (random.nextGaussian() * Math.pow(10, random.nextInt(-3, 4)));
    }
    return v;
  }
}
