package io.dynnibal.index.exact;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.ClusteredVectors;
import io.dynnibal.index.VectorMath;
import java.util.Arrays;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Mining by scoring the whole cache: the top k are brute force's, and the draws follow the exact
 * softmax over every row.
 */
class ExactSoftmaxMinerTest {
  @Test
  void theTopKAreBruteForcesBestFirst() {
    float[][] vectors = ClusteredVectors.generate(3000, 24, 5);
    SplittableRandom random = new SplittableRandom(6);
    float[][] queries = new float[7][];
    for (int q = 0; q < queries.length; q++) {
      queries[q] = ClusteredVectors.queryNear(vectors[random.nextInt(vectors.length)], 0.3, random);
    }
    ExactSoftmaxMiner miner = new ExactSoftmaxMiner(vectors);
    float[][] scores = miner.scores(queries);
    for (int q = 0; q < queries.length; q++) {
      float[] query = queries[q];
      int[] expected =
          IntStream.range(0, vectors.length)
              .boxed()
              .sorted(
                  Comparator.comparingDouble((Integer r) -> -VectorMath.dot(query, vectors[r]))
                      .thenComparingInt(r -> r))
              .limit(20)
              .mapToInt(Integer::intValue)
              .toArray();
      assertArrayEquals(expected, ExactSoftmaxMiner.topK(scores[q], 20), "query " + q);
    }
  }

  @Test
  void drawsFollowTheExactSoftmax() {
    float[][] vectors = ClusteredVectors.generate(40, 8, 7);
    float[] query = ClusteredVectors.queryNear(vectors[3], 0.3, new SplittableRandom(8));
    double beta = 4;
    float[] scores = new ExactSoftmaxMiner(vectors).scores(new float[][] {query})[0];
    double[] softmax = new double[scores.length];
    double max = Double.NEGATIVE_INFINITY;
    for (float s : scores) {
      max = Math.max(max, s);
    }
    for (int i = 0; i < scores.length; i++) {
      softmax[i] = Math.exp(beta * (scores[i] - max));
    }
    double sum = Arrays.stream(softmax).sum();
    double[] counts = new double[scores.length];
    int draws = 400_000;
    for (int target : ExactSoftmaxMiner.sample(scores, beta, draws, new SplittableRandom(9))) {
      counts[target]++;
    }
    double tv = 0;
    for (int i = 0; i < scores.length; i++) {
      tv += Math.abs(counts[i] / draws - softmax[i] / sum) / 2;
    }
    // 40 outcomes and 400,000 draws: sampling noise alone gives a distance near 0.004.
    assertTrue(tv < 0.01, "total variation to the exact softmax: " + tv);
  }
}
