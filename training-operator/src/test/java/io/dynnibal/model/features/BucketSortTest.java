package io.dynnibal.model.features;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class BucketSortTest {

  /**
   * Any length (below and above the insertion-sort cut), any bound, repeats: Arrays.sort's order.
   */
  @ParameterizedTest
  @ValueSource(ints = {16, 17, 1000, 1 << 18, 1 << 20, 1 << 24, Integer.MAX_VALUE})
  void sortsLikeArraysSort(int bound) {
    SplittableRandom random = new SplittableRandom(bound);
    for (int trial = 0; trial < 200; trial++) {
      int n = random.nextInt(0, 700);
      int[] ids = new int[n + 5];
      for (int i = 0; i < ids.length; i++) {
        // Every so often a small range, so that ids repeat as a text's n-grams do.
        ids[i] = trial % 4 == 0 ? random.nextInt(Math.min(bound, 8)) : random.nextInt(bound);
      }
      int[] expected = ids.clone();
      Arrays.sort(expected, 0, n);
      BucketSort.sort(ids, n, bound);
      assertArrayEquals(expected, ids, "n " + n + ", trial " + trial);
    }
  }
}
