package io.dynnibal.index.sampling;

import io.dynnibal.index.TileScores;
import io.dynnibal.index.VectorMath;
import io.dynnibal.index.sgtree.SgTreeSnapshot;
import java.util.Arrays;
import java.util.stream.IntStream;

/**
 * The exact softmax {@code P(node | x) ∝ own(node) exp(beta <x, node>)} over every node of a tree's
 * snapshot, for a batch of queries in one pass: the nodes are taken {@link TileScores#ROWS} at a
 * time, each tile loaded once for every query, and per query and tile only what a draw or a top-k
 * needs is kept, the tile's log mass and the best nodes so far; no query's scores of all nodes are
 * ever held. A node's score is {@link SgTreeSnapshot#tileScore}'s, bit for bit.
 */
final class CacheSoftmax {
  /** One query's pass: its log mass per tile and in all, and its best nodes if asked for. */
  static final class Scored {
    final float[] query;
    final double[] tileLogMass;
    final int[] bestNodes;
    final float[] bestScores;
    double logMass;
    int best;

    private Scored(float[] query, int tiles, int keep) {
      this.query = query;
      this.tileLogMass = new double[tiles];
      this.bestNodes = new int[keep];
      this.bestScores = new float[keep];
    }

    /** What a node must score above to be offered: the worst kept, once {@code keep} are. */
    private float bound() {
      return best < bestNodes.length ? Float.NEGATIVE_INFINITY : bestScores[best - 1];
    }

    /**
     * Node {@code node} of score {@code score}, if it is among the best so far (ties: lower node).
     */
    private void offer(int node, float score) {
      int keep = bestNodes.length;
      if (best == keep && !(score > bestScores[keep - 1])) {
        return;
      }
      int at = Math.min(best, keep - 1);
      while (at > 0 && bestScores[at - 1] < score) {
        bestScores[at] = bestScores[at - 1];
        bestNodes[at] = bestNodes[at - 1];
        at--;
      }
      bestScores[at] = score;
      bestNodes[at] = node;
      best = Math.min(keep, best + 1);
    }
  }

  private CacheSoftmax() {}

  /** Tiles a snapshot of {@code nodes} nodes is scored in. */
  static int tiles(int nodes) {
    return (nodes + TileScores.ROWS - 1) / TileScores.ROWS;
  }

  /**
   * How far below its bound a query's log mass may fall before its pass is redone with each tile's
   * own maximum as the shift: a term more than 87 nats under the shift underflows a float, and
   * within 30 nats of the bound every term that does is at least 57 nats under the query's mass.
   */
  static final double FARTHEST_BELOW_BOUND = 30;

  /**
   * Every query against every node of {@code view}, keeping the {@code keep} best nodes holding a
   * target of each (none for {@code keep = 0}).
   *
   * <p>Each query's exponentials are shifted by {@code beta} times a bound on all its scores, the
   * query's norm times the largest node's: no term overflows, and no tile is read twice for its
   * maximum. A query whose mass lies far under its bound is scored again with each tile's maximum.
   */
  static Scored[] score(SgTreeSnapshot view, float[][] queries, double beta, int keep) {
    float[] shift = new float[queries.length];
    for (int q = 0; q < queries.length; q++) {
      shift[q] = (float) (beta * VectorMath.norm(queries[q]) * view.maxNorm());
    }
    Scored[] out = score(view, queries, beta, keep, shift);
    int[] far =
        IntStream.range(0, out.length)
            .filter(q -> out[q].logMass - shift[q] < -FARTHEST_BELOW_BOUND)
            .toArray();
    if (far.length > 0) { // all of them in one more pass
      float[][] again = new float[far.length][];
      Arrays.setAll(again, i -> queries[far[i]]);
      Scored[] rescored = score(view, again, beta, keep, null);
      for (int i = 0; i < far.length; i++) {
        out[far[i]] = rescored[i];
      }
    }
    return out;
  }

  /** The pass: each query's terms shifted by {@code shift}, or by each tile's maximum if null. */
  static Scored[] score(
      SgTreeSnapshot view, float[][] queries, double beta, int keep, float[] shift) {
    int tiles = tiles(view.nodeCount());
    Scored[] out = new Scored[queries.length];
    for (int q = 0; q < queries.length; q++) {
      out[q] = new Scored(queries[q], tiles, keep);
    }
    int rows = TileScores.ROWS;
    float[] tile = new float[queries.length == 0 ? 0 : queries[0].length * rows];
    float[] scale = new float[rows];
    float[] weight = new float[rows];
    float[][] scores = new float[queries.length][rows];
    float floatBeta = (float) beta;
    for (int t = 0; t < tiles; t++) {
      int first = t * rows;
      view.tile(first, tile, scale, weight);
      TileScores.dots(tile, scale, queries, scores);
      for (int q = 0; q < queries.length; q++) {
        Scored s = out[q];
        float[] row = scores[q];
        float by = shift != null ? shift[q] : floatBeta * TileScores.max(row, weight);
        // No node of the tile holds a target: a sum of no terms, whatever the shift.
        s.tileLogMass[t] =
            by == Float.NEGATIVE_INFINITY
                ? Double.NEGATIVE_INFINITY
                : by + Math.log(TileScores.expSum(row, weight, floatBeta, by));
        for (int r = keep == 0 ? rows : TileScores.firstAbove(row, weight, s.bound(), 0);
            r < rows;
            r = TileScores.firstAbove(row, weight, s.bound(), r + 1)) {
          s.offer(first + r, row[r]);
        }
      }
    }
    for (Scored s : out) {
      s.logMass = logSumExp(s.tileLogMass);
    }
    return out;
  }

  static double logSumExp(double[] logs) {
    double max = Double.NEGATIVE_INFINITY;
    for (double l : logs) {
      max = Math.max(max, l);
    }
    if (max == Double.NEGATIVE_INFINITY) {
      return max;
    }
    double sum = 0;
    for (double l : logs) {
      sum += Math.exp(l - max);
    }
    return max + Math.log(sum);
  }
}
