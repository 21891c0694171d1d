package io.dynnibal.negatives;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class FullDimensionPoolTest {
  private static final int DIM = 16;

  @Test
  void topKEqualsBruteForceRanking() {
    SplittableRandom random = new SplittableRandom(7);
    float[][] vectors = randomVectors(random, 500);
    float[][] queries = randomVectors(random, 40);
    try (FullDimensionPool pool = FullDimensionPool.of(ids(vectors.length), vectors, DIM)) {
      FullDimensionPool.TopK top = pool.topK(queries, 5);
      for (int q = 0; q < queries.length; q++) {
        int[] expected = bruteForce(queries[q], vectors, 5);
        assertArrayEquals(expected, top.members()[q], "query " + q);
        for (int r = 0; r < 5; r++) {
          assertEquals(dot(queries[q], vectors[expected[r]]), top.scores()[q][r], 1e-4);
        }
      }
    }
  }

  @Test
  void samplesFollowTheExactSoftmaxWithoutTheExcludedMember() {
    // Chi-square of 60,000 draws against the exact softmax over 200 members (beta 5), member 3
    // excluded: it must never be drawn, and the rest must fit at the 0.999 level.
    SplittableRandom random = new SplittableRandom(8);
    float[][] vectors = randomVectors(random, 200);
    float[][] query = randomVectors(random, 1);
    float beta = 5f;
    int excluded = 3;
    int draws = 60_000;
    try (FullDimensionPool pool = FullDimensionPool.of(ids(vectors.length), vectors, DIM)) {
      FullDimensionPool.Drawn drawn =
          pool.sample(query, draws, beta, new int[] {excluded}, new SplittableRandom(9));
      int[] counts = new int[vectors.length];
      for (int m : drawn.members()[0]) {
        counts[m]++;
      }
      assertEquals(0, counts[excluded], "the excluded member was drawn");
      double[] p = new double[vectors.length];
      double max = Double.NEGATIVE_INFINITY;
      for (int i = 0; i < p.length; i++) {
        max = Math.max(max, beta * dot(query[0], vectors[i]));
      }
      double sum = 0;
      for (int i = 0; i < p.length; i++) {
        p[i] = i == excluded ? 0 : Math.exp(beta * dot(query[0], vectors[i]) - max);
        sum += p[i];
      }
      double chi = 0;
      int bins = 0;
      for (int i = 0; i < p.length; i++) {
        double expected = p[i] / sum * draws;
        if (expected >= 5) {
          chi += (counts[i] - expected) * (counts[i] - expected) / expected;
          bins++;
        }
      }
      double k = bins - 1; // Wilson-Hilferty 0.999 quantile
      double t = 1 - 2 / (9 * k) + 3.09 * Math.sqrt(2 / (9 * k));
      assertTrue(chi < k * t * t * t, "chi-square " + chi + " over " + k + " degrees of freedom");
      assertEquals(max + Math.log(sum), drawn.logMass()[0], 1e-3, "log mass without member 3");
    }
  }

  @Test
  void equalScoresKeepTheLowerMemberFirst() {
    float[][] vectors = new float[6][DIM];
    for (float[] v : vectors) {
      v[0] = 1f; // all identical: every score ties
    }
    try (FullDimensionPool pool = FullDimensionPool.of(ids(6), vectors, DIM)) {
      float[] query = new float[DIM];
      query[0] = 1f;
      assertArrayEquals(new int[] {0, 1, 2}, pool.topK(new float[][] {query}, 3).members()[0]);
    }
  }

  @Test
  void kLargerThanThePoolReturnsEveryMember() {
    SplittableRandom random = new SplittableRandom(3);
    float[][] vectors = randomVectors(random, 3);
    try (FullDimensionPool pool = FullDimensionPool.of(ids(3), vectors, DIM)) {
      int[] members = pool.topK(randomVectors(random, 1), 10).members()[0];
      assertEquals(3, members.length);
      assertEquals(List.of(0, 1, 2), IntStream.of(members).sorted().boxed().toList());
    }
  }

  @Test
  void memoryIsMembersTimesDimension() {
    try (FullDimensionPool pool =
        FullDimensionPool.of(ids(10), randomVectors(new SplittableRandom(1), 10), DIM)) {
      assertEquals(10L * DIM, pool.floats());
      assertEquals("t3", pool.id(3));
    }
  }

  static float[][] randomVectors(SplittableRandom random, int n) {
    float[][] v = new float[n][DIM];
    for (float[] row : v) {
      for (int j = 0; j < DIM; j++) {
        row[j] = (float) (random.nextDouble() * 2 - 1);
      }
    }
    return v;
  }

  private static List<String> ids(int n) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ids.add("t" + i);
    }
    return ids;
  }

  private static int[] bruteForce(float[] query, float[][] vectors, int k) {
    return IntStream.range(0, vectors.length)
        .boxed()
        .sorted(
            Comparator.comparingDouble((Integer i) -> -dot(query, vectors[i]))
                .thenComparing(i -> i))
        .limit(k)
        .mapToInt(Integer::intValue)
        .toArray();
  }

  static float dot(float[] a, float[] b) {
    double s = 0;
    for (int i = 0; i < a.length; i++) {
      s += a[i] * b[i];
    }
    return (float) s;
  }
}
