package io.dynnibal.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class TopScoresTest {
  /** The heap's answer is a full sort's prefix, ties by index, among the eligible items. */
  @Test
  void theBestAreASortsPrefixAmongTheEligible() {
    SplittableRandom random = new SplittableRandom(3);
    for (int round = 0; round < 50; round++) {
      int n = random.nextInt(1, 300);
      int k = random.nextInt(0, n + 5);
      double[] scores = new double[n];
      for (int i = 0; i < n; i++) {
        scores[i] = random.nextInt(40); // many ties
      }
      int mod = random.nextInt(1, 4);
      int[] expected =
          IntStream.range(0, n)
              .filter(i -> i % mod == 0)
              .boxed()
              .sorted(Comparator.comparingDouble((Integer i) -> -scores[i]).thenComparing(i -> i))
              .limit(k)
              .mapToInt(Integer::intValue)
              .toArray();
      assertArrayEquals(expected, TopScores.of(n, k, i -> scores[i], i -> i % mod == 0));
    }
  }
}
