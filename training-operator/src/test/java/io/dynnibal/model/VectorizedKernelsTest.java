package io.dynnibal.model;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The embedding tables' Vector API kernels give their scalar loops' bits. The test JVMs have the
 * module (the root pom's surefire argLine; {@code VectorMathTest} fails without it), so {@link
 * io.dynnibal.index.VectorMath#VECTORIZED} holds and the vector kernels are the ones tested.
 */
class VectorizedKernelsTest {

  /**
   * A bag's pooled embedding is the same bits on either kernel at every width (the 32-wide blocks,
   * the 8-wide ones and the scalar rest), and so is a gradient's scatter into a row.
   */
  @ParameterizedTest
  @ValueSource(ints = {1, 5, 8, 13, 31, 32, 40, 64, 67, 100, 384})
  void theRowKernelsAreTheScalarLoopsBitForBit(int dimension) {
    SplittableRandom random = new SplittableRandom(dimension);
    int rowCount = 50;
    float[] table = randomVector(rowCount * dimension, random);
    for (int trial = 0; trial < 20; trial++) {
      int count = random.nextInt(0, 300);
      int[] rows = new int[count + 3];
      float[] weights = randomVector(count + 3, random);
      for (int j = 0; j < rows.length; j++) {
        rows[j] = random.nextInt(rowCount); // repeats included
      }
      float[] expected = randomVector(dimension + 2, random);
      float[] actual = expected.clone();
      RowKernels.scalarWeightedRowSum(table, dimension, rows, weights, count, expected, 1, 0);
      RowKernels.weightedRowSum(table, dimension, rows, weights, count, actual, 1);
      assertBitsEqual(expected, actual, "pooled, trial " + trial);

      float a = weights[0];
      float[] y = randomVector(dimension + 3, random);
      float[] scalar = y.clone();
      for (int k = 0; k < dimension; k++) {
        scalar[2 + k] += a * table[k + 1];
      }
      RowKernels.addScaled(a, table, 1, y, 2, dimension);
      assertBitsEqual(scalar, y, "scaled, trial " + trial);
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 5, 8, 13, 31, 32, 40, 64, 67, 100, 384})
  void theAdamKernelIsTheScalarLoopBitForBit(int dimension) {
    SplittableRandom random = new SplittableRandom(dimension);
    for (int trial = 0; trial < 20; trial++) {
      float[] parameters = randomVector(dimension + 4, random);
      float[] mean = randomVector(dimension + 4, random);
      float[] variance = randomVector(dimension + 4, random);
      for (int i = 0; i < variance.length; i++) {
        variance[i] = Math.abs(variance[i]); // a second moment
      }
      float[] gradient = randomVector(dimension + 1, random);
      float scale = trial % 3 == 0 ? 1f : (float) random.nextDouble(0.01, 1);
      float stepSize = (float) random.nextDouble(1e-5, 1e-1);
      float[][] scalar = {parameters.clone(), mean.clone(), variance.clone()};
      AdamKernel.Step step = new AdamKernel.Step(scale, 0.9f, 0.999f, 1e-8f);
      AdamKernel.scalarUpdate(
          new AdamKernel.Moments(scalar[0], scalar[1], scalar[2]),
          3,
          gradient,
          1,
          dimension,
          step,
          stepSize,
          0);
      AdamKernel.update(
          new AdamKernel.Moments(parameters, mean, variance),
          3,
          gradient,
          1,
          dimension,
          step,
          stepSize);
      assertBitsEqual(scalar[0], parameters, "parameters, trial " + trial);
      assertBitsEqual(scalar[1], mean, "mean, trial " + trial);
      assertBitsEqual(scalar[2], variance, "variance, trial " + trial);
    }
  }

  private static void assertBitsEqual(float[] expected, float[] actual, String what) {
    for (int i = 0; i < expected.length; i++) {
      assertEquals(
          Float.floatToIntBits(expected[i]), Float.floatToIntBits(actual[i]), what + " at " + i);
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
