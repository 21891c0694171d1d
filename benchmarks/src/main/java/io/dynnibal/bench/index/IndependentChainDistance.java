package io.dynnibal.bench.index;

import java.util.Arrays;
import java.util.Comparator;
import java.util.stream.IntStream;

/**
 * The exact distribution of an independent Metropolis-Hastings chain after each step, for a
 * proposal Q and target P over n states, in O(n) per step (after one sort): with {@code w = P/Q},
 * the acceptance {@code min(1, w'/w)} splits every sum into states of lower and higher w, which
 * prefix sums answer. Used to report the total-variation distance of the sampler to the softmax
 * without sampling noise.
 */
public final class IndependentChainDistance {
  private IndependentChainDistance() {}

  /**
   * TV distance to P of the chain's state after {@code chainLength} proposals (the first from Q),
   * for 1..maxLength. P and Q must be positive everywhere (normalised).
   */
  public static double[] totalVariationByLength(double[] p, double[] q, int maxLength) {
    int n = p.length;
    double[] w = new double[n];
    for (int i = 0; i < n; i++) {
      if (!(p[i] > 0 && q[i] > 0)) {
        throw new IllegalArgumentException(
            "P and Q must be positive; state " + i + " has P=" + p[i] + ", Q=" + q[i]);
      }
      w[i] = p[i] / q[i];
    }
    Integer[] boxed = IntStream.range(0, n).boxed().toArray(Integer[]::new);
    Arrays.sort(boxed, Comparator.comparingDouble(i -> w[i]));
    int[] order = Arrays.stream(boxed).mapToInt(Integer::intValue).toArray();
    // groupEnd[k]: one past the last sorted position whose w equals w[order[k]] (ties accept both
    // ways).
    int[] groupEnd = new int[n];
    for (int k = n - 1; k >= 0; k--) {
      groupEnd[k] = k + 1 < n && w[order[k + 1]] == w[order[k]] ? groupEnd[k + 1] : k + 1;
    }
    int[] groupStart = new int[n];
    for (int k = 0; k < n; k++) {
      groupStart[k] = k > 0 && w[order[k - 1]] == w[order[k]] ? groupStart[k - 1] : k;
    }
    // accept(y) = sum_{w' >= w} Q + (1/w) sum_{w' < w} P: fixed, independent of the chain's state.
    double[] prefixQ = new double[n + 1];
    double[] prefixP = new double[n + 1];
    for (int k = 0; k < n; k++) {
      prefixQ[k + 1] = prefixQ[k] + q[order[k]];
      prefixP[k + 1] = prefixP[k] + p[order[k]];
    }
    double[] accept = new double[n];
    for (int k = 0; k < n; k++) {
      int y = order[k];
      accept[y] = (prefixQ[n] - prefixQ[groupStart[k]]) + prefixP[groupStart[k]] / w[y];
    }
    double[] pi = q.clone();
    double[] tv = new double[maxLength];
    tv[0] = tv(pi, p);
    double[] prefixPi = new double[n + 1];
    double[] suffixPiOverW = new double[n + 1];
    for (int length = 2; length <= maxLength; length++) {
      for (int k = 0; k < n; k++) {
        prefixPi[k + 1] = prefixPi[k] + pi[order[k]];
      }
      suffixPiOverW[n] = 0;
      for (int k = n - 1; k >= 0; k--) {
        suffixPiOverW[k] = suffixPiOverW[k + 1] + pi[order[k]] / w[order[k]];
      }
      double[] next = new double[n];
      for (int k = 0; k < n; k++) {
        int y = order[k];
        // from states of w <= w(y) a move to y is always accepted; from higher w with probability
        // w(y)/w
        double reach = prefixPi[groupEnd[k]] + w[y] * suffixPiOverW[groupEnd[k]];
        next[y] = q[y] * reach + pi[y] * (1 - accept[y]);
      }
      pi = next;
      tv[length - 1] = tv(pi, p);
    }
    return tv;
  }

  private static double tv(double[] a, double[] b) {
    double sum = 0;
    for (int i = 0; i < a.length; i++) {
      sum += Math.abs(a[i] - b[i]);
    }
    return sum / 2;
  }
}
