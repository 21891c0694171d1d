package io.dynnibal.index.exact;

import io.dynnibal.index.TopScores;
import io.dynnibal.index.VectorMath;
import io.dynnibal.index.sampling.CumulativeWeights;
import java.util.SplittableRandom;

/**
 * Mining by scoring every vector of a cache: a batch of queries against all rows at once ({@link
 * VectorMath#dotsAll}, rows contiguous, tiled, four queries per load of a row), then per query the
 * k best rows or k draws from the exact softmax {@code p(i) ∝ exp(beta * score(i))}. It is the
 * paper's softmax over the cached vectors with the tree's approximation taken away, so the peer
 * that the tree's mining is measured against.
 *
 * <p>Invariant: a row's score is {@link VectorMath#dot(float[], float[])}'s, bit for bit, whatever
 * the batch; what a query gets depends on its scores (and, for draws, the random source) only.
 */
public final class ExactSoftmaxMiner {
  private final float[] rows;
  private final int dim;
  private final int size;

  /** A miner over {@code vectors}, copied into one row-major array. */
  public ExactSoftmaxMiner(float[][] vectors) {
    if (vectors.length == 0) {
      throw new IllegalArgumentException("no vectors to mine");
    }
    this.dim = vectors[0].length;
    this.size = vectors.length;
    this.rows = new float[size * dim];
    for (int r = 0; r < size; r++) {
      if (vectors[r].length != dim) {
        throw new IllegalArgumentException("row " + r + " has " + vectors[r].length + " floats");
      }
      System.arraycopy(vectors[r], 0, rows, r * dim, dim);
    }
  }

  public int size() {
    return size;
  }

  /** Every row's score for each query: {@code [query][row]}. */
  public float[][] scores(float[][] queries) {
    float[][] out = new float[queries.length][size];
    VectorMath.dotsAll(queries, rows, dim, out);
    return out;
  }

  /** The {@code k} rows of highest score, best first (ties: the lower row first). */
  public static int[] topK(float[] scores, int k) {
    return TopScores.of(scores.length, k, i -> scores[i]);
  }

  /**
   * {@code k} independent draws from the softmax of {@code beta * scores}, exactly: the weights
   * {@code exp(beta * (score - max))} as running sums, then one binary search per draw.
   */
  public static int[] sample(float[] scores, double beta, int k, SplittableRandom random) {
    double max = Double.NEGATIVE_INFINITY;
    for (float s : scores) {
      max = Math.max(max, s);
    }
    double[] weights = new double[scores.length];
    for (int r = 0; r < scores.length; r++) {
      weights[r] = Math.exp(beta * (scores[r] - max));
    }
    CumulativeWeights softmax = new CumulativeWeights(weights);
    int[] draws = new int[k];
    for (int d = 0; d < k; d++) {
      draws[d] = softmax.draw(random);
    }
    return draws;
  }
}
