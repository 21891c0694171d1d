package io.dynnibal.index;

import java.util.Arrays;
import java.util.function.IntPredicate;

/**
 * The {@code k} items of highest score among {@code n}, best first; ties go to the lower index, so
 * the order is a function of the scores alone. One pass with a min-heap of the best {@code k} so
 * far: {@code O(n log k)} comparisons and no array of {@code n}.
 */
public final class TopScores {
  /** Item {@code i}'s score. */
  @FunctionalInterface
  public interface Scores {
    double score(int i);
  }

  private TopScores() {}

  /** The best {@code k} of items {@code 0} to {@code n - 1}. */
  public static int[] of(int n, int k, Scores scores) {
    return of(n, k, scores, i -> true);
  }

  /** The best {@code k} of the items {@code eligible} admits (fewer when fewer are). */
  public static int[] of(int n, int k, Scores scores, IntPredicate eligible) {
    int[] heap = new int[Math.max(0, Math.min(k, n))];
    int filled = 0;
    for (int i = 0; i < n; i++) {
      if (!eligible.test(i)) {
        continue;
      }
      if (filled < heap.length) {
        heap[filled] = i;
        siftUp(heap, filled++, scores);
      } else if (filled > 0 && better(i, heap[0], scores)) {
        heap[0] = i;
        siftDown(heap, filled, scores);
      }
    }
    Integer[] best = new Integer[filled];
    for (int j = 0; j < filled; j++) {
      best[j] = heap[j];
    }
    Arrays.sort(best, (a, b) -> better(a, b, scores) ? -1 : better(b, a, scores) ? 1 : 0);
    return Arrays.stream(best).mapToInt(Integer::intValue).toArray();
  }

  private static boolean better(int a, int b, Scores scores) {
    double x = scores.score(a);
    double y = scores.score(b);
    return x > y || (x == y && a < b);
  }

  private static void siftUp(int[] heap, int i, Scores scores) {
    while (i > 0) {
      int parent = (i - 1) / 2;
      if (!better(heap[parent], heap[i], scores)) {
        return;
      }
      swap(heap, parent, i);
      i = parent;
    }
  }

  private static void siftDown(int[] heap, int n, Scores scores) {
    int i = 0;
    while (true) {
      int worst = i;
      int left = 2 * i + 1;
      int right = left + 1;
      if (left < n && better(heap[worst], heap[left], scores)) {
        worst = left;
      }
      if (right < n && better(heap[worst], heap[right], scores)) {
        worst = right;
      }
      if (worst == i) {
        return;
      }
      swap(heap, i, worst);
      i = worst;
    }
  }

  private static void swap(int[] heap, int a, int b) {
    int t = heap[a];
    heap[a] = heap[b];
    heap[b] = t;
  }
}
