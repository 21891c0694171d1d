package io.dynnibal.training.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.negatives.NegativesPool;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class UniformPoolTest {
  /** Ten targets; pairs name targets 0-3. */
  private static final Map<String, Integer> INDEX = new HashMap<>();

  private static final List<LabelledQuery> PAIRS =
      List.of(pair("t0"), pair("t1"), pair("t2"), pair("t3"), pair("t1"));

  static {
    for (int t = 0; t < 10; t++) {
      INDEX.put("t" + t, t);
    }
  }

  private static LabelledQuery pair(String target) {
    return new LabelledQuery("q-" + target, "query for " + target, target);
  }

  private static int[] counts(UniformPool pool, int draws) {
    int[] counts = new int[10];
    Random random = new Random(7);
    for (int i = 0; i < draws; i++) {
      counts[pool.draw(random)]++;
    }
    return counts;
  }

  @Test
  void anUnnamedTargetIsDrawnAtTheShareOfANamedOnesRate() {
    UniformPool pool = UniformPool.of(NegativesPool.POSITIVES, 0.25, PAIRS, INDEX, 10);
    // Weights 1 (x4) and 0.25 (x6): a named target 1/5.5, an unnamed one 0.25/5.5.
    int draws = 220_000;
    int[] counts = counts(pool, draws);
    double chiSquare = 0;
    for (int t = 0; t < 10; t++) {
      double expected = draws * (t < 4 ? 1 : 0.25) / 5.5;
      chiSquare += (counts[t] - expected) * (counts[t] - expected) / expected;
    }
    // 9 degrees of freedom: 27.9 is the 0.999 quantile.
    assertTrue(chiSquare < 27.9, "chi-square " + chiSquare);
  }

  @Test
  void withoutAShareOnlyNamedTargetsAreDrawn() {
    int[] counts = counts(UniformPool.of(NegativesPool.POSITIVES, 0, PAIRS, INDEX, 10), 10_000);
    for (int t = 4; t < 10; t++) {
      assertEquals(0, counts[t], "t" + t + " is named by no pair");
    }
  }

  @Test
  void poolAllDrawsEveryTargetAlike() {
    int[] counts = counts(UniformPool.of(NegativesPool.ALL, 0, PAIRS, INDEX, 10), 100_000);
    for (int t = 0; t < 10; t++) {
      assertTrue(Math.abs(counts[t] - 10_000) < 400, "t" + t + ": " + counts[t]);
    }
  }
}
