package io.dynnibal.index.sampling;

import java.util.random.RandomGenerator;

/**
 * Draws an index with probability proportional to its weight, from running sums (binary search,
 * O(log n)).
 */
public final class CumulativeWeights {
  private final double[] cumulative;
  private final int length;

  /** Weights must be finite and non-negative, with a positive sum. */
  public CumulativeWeights(double[] weights) {
    this(new double[weights.length], weights, weights.length);
  }

  private CumulativeWeights(double[] cumulative, double[] weights, int length) {
    double sum = 0;
    for (int i = 0; i < length; i++) {
      sum += weights[i];
      cumulative[i] = sum;
    }
    if (!(sum > 0) || Double.isInfinite(sum)) {
      throw new IllegalArgumentException("weights must have a positive finite sum, got " + sum);
    }
    this.cumulative = cumulative;
    this.length = length;
  }

  /**
   * Over the first {@code length} weights, which are replaced by their running sums: the array is
   * the draws' from then on (a caller that reuses it for the next weights makes this one invalid).
   */
  public static CumulativeWeights inPlace(double[] weights, int length) {
    return new CumulativeWeights(weights, weights, length);
  }

  public double total() {
    return cumulative[length - 1];
  }

  /**
   * The first index whose running sum exceeds {@code u * total}: never an index of weight 0 (equal
   * running sums), which a plain {@code Arrays.binarySearch} may return on an exact hit.
   */
  public int draw(RandomGenerator random) {
    double u = random.nextDouble() * total();
    int low = 0;
    int high = length - 1;
    while (low < high) {
      int mid = (low + high) >>> 1;
      if (cumulative[mid] > u) {
        high = mid;
      } else {
        low = mid + 1;
      }
    }
    return low;
  }
}
