package io.dynnibal.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.djl.ndarray.NDManager;
import io.dynnibal.model.TorchRuntime;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Ranks and metrics against brute force. */
class RetrievalEvaluatorTest {
  @Test
  void ranksMatchBruteForceIncludingTiesAndUnknownTargets() {
    Random random = new Random(17);
    int n = 700;
    int d = 8;
    float[][] targets = new float[n][d];
    for (float[] t : targets) {
      for (int k = 0; k < d; k++) {
        t[k] = random.nextInt(3) - 1; // coarse values: many exact ties
      }
    }
    float[][] queries = new float[300][d];
    int[] positives = new int[queries.length];
    for (int i = 0; i < queries.length; i++) {
      for (int k = 0; k < d; k++) {
        queries[i][k] = random.nextInt(3) - 1;
      }
      positives[i] = i % 50 == 0 ? -1 : random.nextInt(n);
    }
    long[] ranks;
    try (NDManager manager = TorchRuntime.engine().newBaseManager()) {
      ranks = RetrievalEvaluator.ranks(manager, queries, targets, positives);
    }
    for (int i = 0; i < queries.length; i++) {
      if (positives[i] < 0) {
        assertEquals(Long.MAX_VALUE, ranks[i]);
        continue;
      }
      float positive = dot(queries[i], targets[positives[i]]);
      long expected = 0;
      for (int t = 0; t < n; t++) {
        if (t != positives[i] && dot(queries[i], targets[t]) >= positive) {
          expected++; // ties count against the model
        }
      }
      assertEquals(expected, ranks[i], "query " + i);
    }
  }

  @Test
  void metricsFollowTheirDefinitions() {
    long[] ranks = {0, 0, 4, 9, 10, 99, 100, Long.MAX_VALUE};
    RetrievalMetrics m = RetrievalEvaluator.summarize(ranks, 1000, 0);
    assertEquals(2 / 8.0, m.recallAt(1), 1e-12);
    assertEquals(3 / 8.0, m.recallAt(5), 1e-12);
    assertEquals(4 / 8.0, m.recallAt(10), 1e-12);
    assertEquals(5 / 8.0, m.recallAt(20), 1e-12);
    assertEquals(6 / 8.0, m.recallAt(100), 1e-12);
    assertEquals((1 + 1 + 1 / 5.0 + 1 / 10.0) / 8, m.mrr().get(10), 1e-12);
    assertEquals((1 + 1 + 1 / 5.0 + 1 / 10.0 + 1 / 11.0 + 1 / 100.0) / 8, m.mrr().get(100), 1e-12);
    assertEquals(1, m.unknownTargets());
  }

  private static float dot(float[] a, float[] b) {
    float s = 0;
    for (int i = 0; i < a.length; i++) {
      s += a[i] * b[i];
    }
    return s;
  }
}
