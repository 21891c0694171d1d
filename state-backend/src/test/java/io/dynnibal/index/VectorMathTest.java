package io.dynnibal.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
   * Codes read at an offset of a longer array (a snapshot's) score as they do alone.
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
          Double.doubleToLongBits(VectorMath.scalarDot(x, codes, 0, scale)),
          Double.doubleToLongBits(VectorMath.dot(x, codes, scale)),
          "trial " + trial);
      // Codes kept back to back with others in one array score as they do alone.
      int offset = random.nextInt(3 * dimension + 1);
      byte[] many = new byte[offset + dimension + random.nextInt(dimension + 1)];
      random.nextBytes(many);
      System.arraycopy(codes, 0, many, offset, dimension);
      assertEquals(
          Double.doubleToLongBits(VectorMath.dot(x, codes, scale)),
          Double.doubleToLongBits(VectorMath.dot(x, many, offset, scale)));
      assertEquals(
          Double.doubleToLongBits(VectorMath.dot(x, codes, scale)),
          Double.doubleToLongBits(VectorMath.scalarDot(x, many, offset, scale)));
      assertEquals(
          Double.doubleToLongBits(VectorMath.scalarDot(x, v)),
          Double.doubleToLongBits(VectorMath.dot(x, v)),
          "trial " + trial);
    }
  }

  /**
   * Vectors back to back scored together (four at a time, then one by one) are each the bits of the
   * scalar loop, at any count and offset.
   */
  @ParameterizedTest
  @ValueSource(ints = {1, 5, 8, 13, 64, 67, 128})
  void manyInnerProductsAtOnceAreEachTheScalarLoopsBits(int dimension) {
    SplittableRandom random = new SplittableRandom(dimension);
    for (int trial = 0; trial < 20; trial++) {
      int count = random.nextInt(0, 11);
      int first = random.nextInt(4);
      float[] x = randomVector(dimension, random);
      float[] scales = new float[first + count];
      byte[] codes = new byte[(first + count) * dimension];
      byte[] one = new byte[dimension];
      for (int k = 0; k < first + count; k++) {
        float[] w = randomVector(dimension, random);
        scales[k] = Int8Quantizer.scaleFor(w);
        Int8Quantizer.encode(w, scales[k], one);
        System.arraycopy(one, 0, codes, k * dimension, dimension);
      }
      double[] out = new double[count + 1];
      out[count] = 42;
      VectorMath.dots(x, codes, first * dimension, scales, first, count, out);
      for (int k = 0; k < count; k++) {
        assertEquals(
            Double.doubleToLongBits(
                VectorMath.scalarDot(x, codes, (first + k) * dimension, scales[first + k])),
            Double.doubleToLongBits(out[k]),
            "trial " + trial + ", vector " + k + " of " + count);
      }
      assertEquals(42, out[count], "written past the count");
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 5, 8, 13, 31, 32, 40, 64, 67, 100, 384})
  void theCodedSquaredDistanceIsTheScalarSum(int dimension) {
    assumeTrue(VectorMath.VECTORIZED);
    SplittableRandom random = new SplittableRandom(dimension);
    for (int trial = 0; trial < 20; trial++) {
      byte[] a = new byte[dimension];
      byte[] b = new byte[dimension];
      for (int i = 0; i < dimension; i++) {
        a[i] = (byte) random.nextInt(-127, 128);
        b[i] = (byte) random.nextInt(-127, 128);
      }
      int shift = trial % 4;
      assertEquals(
          VectorMath.scalarSquaredDistance(a, b, shift, 0),
          VectorizedKernels.squaredDistance(a, b, shift),
          "shift " + shift);
    }
  }

  /** A matrix, or its transpose, times a vector: each output its own sum in order, bit for bit. */
  @ParameterizedTest
  @ValueSource(ints = {1, 3, 4, 7, 64, 65})
  void aMatrixTimesAVectorSumsEachOutputInOrder(int rows) {
    SplittableRandom random = new SplittableRandom(rows);
    int columns = rows + 2;
    double[] m = new double[rows * columns];
    for (int i = 0; i < m.length; i++) {
      m[i] = random.nextGaussian() * Math.pow(10, random.nextInt(-3, 4));
    }
    float[] v = randomVector(columns, random);
    float[] w = randomVector(rows, random);
    float[] out = new float[rows];
    VectorMath.multiply(m, columns, 1, v, out);
    float[] transposedOut = new float[columns];
    VectorMath.multiply(m, 1, columns, w, transposedOut);
    for (int i = 0; i < rows; i++) {
      double sum = 0;
      for (int j = 0; j < columns; j++) {
        sum += m[i * columns + j] * v[j];
      }
      assertEquals(Float.floatToIntBits((float) sum), Float.floatToIntBits(out[i]), "row " + i);
    }
    for (int j = 0; j < columns; j++) {
      double sum = 0;
      for (int i = 0; i < rows; i++) {
        sum += m[i * columns + j] * w[i];
      }
      assertEquals(
          Float.floatToIntBits((float) sum), Float.floatToIntBits(transposedOut[j]), "column " + j);
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
