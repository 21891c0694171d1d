package io.dynnibal.index;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class VectorMathTest {

  /**
   * One vector against many gives {@link VectorMath#dot}'s values bit for bit, at every length (the
   * four-wide loop and its tail), for an odd or even number of vectors, at any offset and stride.
   */
  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3, 4, 5, 7, 8, 13, 64, 67})
  void dotsAreDotBitForBit(int dimension) {
    SplittableRandom random = new SplittableRandom(dimension);
    float[] v = randomVector(dimension, random);
    float[][] xs = new float[9][];
    for (int k = 0; k < xs.length; k++) {
      xs[k] = randomVector(dimension, random);
    }
    for (int from = 0; from < 3; from++) {
      for (int to = from; to <= xs.length; to++) {
        int stride = 3;
        double[] out = new double[1 + (xs.length + 1) * stride];
        Arrays.fill(out, Double.NaN);
        VectorMath.dots(v, xs, from, to, out, 1, stride);
        for (int k = from; k < to; k++) {
          assertEquals(
              Double.doubleToLongBits(VectorMath.dot(xs[k], v)),
              Double.doubleToLongBits(out[1 + (k - from) * stride]),
              "vector " + k + " of [" + from + ", " + to + ")");
        }
        assertEquals(Double.NaN, out[0], "nothing written before the offset");
      }
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
