package io.dynnibal.index.sampling;

import java.util.random.RandomGenerator;

/**
 * Draws an index with probability proportional to its weight, from running sums (binary search,
 * O(log n)).
 */
public final class CumulativeWeights {
  private final double[] cumulative;

  /** Weights must be finite and non-negative, with a positive sum. */
  public CumulativeWeights(double[] weights) {
    cumulative = new double[weights.length];
    double sum = 0;
    for (int i = 0; i < weights.length; i++) {
      sum += weights[i];
      cumulative[i] = sum;
    }
    if (!(sum > 0) || Double.isInfinite(sum)) {
      throw new IllegalArgumentException("weights must have a positive finite sum, got " + sum);
    }
  }

  public double total() {
    return cumulative[cumulative.length - 1];
  }

  /**
   * The first index whose running sum exceeds {@code u * total}: never an index of weight 0 (equal
   * running sums), which a plain {@code Arrays.binarySearch} may return on an exact hit.
   */
  public int draw(RandomGenerator random) {
    double u = random.nextDouble() * total();
    int low = 0;
    int high = cumulative.length - 1;
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
