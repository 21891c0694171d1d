package io.dynnibal.model.features;

import java.util.Arrays;

/**
 * Sorts a text's bucket ids (non-negative ints below a known bound) by least-significant-digit
 * radix sort: a few passes of counting, without comparisons. A text's ids are spread over many
 * buckets in no order, on which {@link Arrays#sort(int[], int, int)}'s quicksort mispredicts its
 * branches often enough to dominate featurizing a text.
 */
final class BucketSort {
  /** Below this many ids, insertion sort is cheaper than clearing the digit counts. */
  private static final int SMALL = 32;

  private BucketSort() {}

  /**
   * Sorts {@code ids[0, n)} in place, ascending.
   *
   * @param bound every id is in {@code [0, bound)}
   */
  static void sort(int[] ids, int n, int bound) {
    if (n < SMALL) {
      insertionSort(ids, n);
      return;
    }
    int bits = Math.max(1, 32 - Integer.numberOfLeadingZeros(bound - 1));
    int passes = (bits + 7) / 8;
    int digitBits = (bits + passes - 1) / passes; // the passes' digits as even as they come
    int mask = (1 << digitBits) - 1;
    int[] counts = new int[1 << digitBits];
    int[] from = ids;
    int[] to = new int[n];
    for (int pass = 0, shift = 0; pass < passes; pass++, shift += digitBits) {
      Arrays.fill(counts, 0);
      for (int i = 0; i < n; i++) {
        counts[(from[i] >>> shift) & mask]++;
      }
      int start = 0;
      for (int d = 0; d < counts.length; d++) {
        int count = counts[d];
        counts[d] = start;
        start += count;
      }
      for (int i = 0; i < n; i++) {
        int id = from[i];
        to[counts[(id >>> shift) & mask]++] = id;
      }
      int[] swap = from;
      from = to;
      to = swap;
    }
    if (from != ids) {
      System.arraycopy(from, 0, ids, 0, n);
    }
  }

  private static void insertionSort(int[] ids, int n) {
    for (int i = 1; i < n; i++) {
      int id = ids[i];
      int j = i - 1;
      while (j >= 0 && ids[j] > id) {
        ids[j + 1] = ids[j];
        j--;
      }
      ids[j + 1] = id;
    }
  }
}
