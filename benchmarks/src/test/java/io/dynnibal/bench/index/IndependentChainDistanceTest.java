package io.dynnibal.bench.index;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class IndependentChainDistanceTest {

  /**
   * The O(n) recursion equals the chain's distribution computed with the full n x n transition
   * matrix.
   */
  @Test
  void matchesTheTransitionMatrixOnASmallChain() {
    SplittableRandom random = new SplittableRandom(3);
    int n = 40;
    double[] p = new double[n];
    double[] q = new double[n];
    for (int i = 0; i < n; i++) {
      p[i] = Math.exp(3 * random.nextDouble());
      q[i] = Math.exp(3 * random.nextDouble());
      if (i % 7 == 0) {
        p[i] = q[i] * 2; // ties in w = P/Q
      }
    }
    IndexBenchmark.normalise(p);
    IndexBenchmark.normalise(q);
    int length = 12;
    double[] fast = IndependentChainDistance.totalVariationByLength(p, q, length);
    double[] pi = q.clone();
    for (int s = 1; s <= length; s++) {
      double tv = 0;
      for (int i = 0; i < n; i++) {
        tv += Math.abs(pi[i] - p[i]) / 2;
      }
      assertEquals(tv, fast[s - 1], 1e-12, "after " + s + " proposals");
      double[] next = new double[n];
      for (int from = 0; from < n; from++) {
        double stay = 1;
        for (int to = 0; to < n; to++) {
          if (to == from) {
            continue;
          }
          double move = q[to] * Math.min(1, (p[to] / q[to]) / (p[from] / q[from]));
          next[to] += pi[from] * move;
          stay -= move;
        }
        next[from] += pi[from] * stay;
      }
      pi = next;
    }
  }
}
