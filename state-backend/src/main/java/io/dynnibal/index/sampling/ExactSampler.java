package io.dynnibal.index.sampling;

import io.dynnibal.index.TileScores;
import io.dynnibal.index.sgtree.SgTree;
import io.dynnibal.index.sgtree.SgTreeSnapshot;
import java.util.random.RandomGenerator;

/**
 * Exact sampling from the softmax {@code P(y|x) ∝ exp(beta <x, y>)} over every target of a tree by
 * scoring all of them: a batch of queries against the tree's flat snapshot in one blocked pass
 * ({@link CacheSoftmax}), then independent draws, each a tile of nodes by its exact mass, a node of
 * the tile by its own targets' mass (the tile scored again for that query alone, the same bits,
 * once for all the draws that fall in it), and one of the node's targets uniformly. It is the
 * softmax over the shard's caches that the paper's samplers approximate (the paper's Nyström
 * approximation without the tree's): no partition, no restarts, no chain, and the exact normaliser
 * as {@link Samples#logMass}. Its cost is the whole tree's inner products for each query, at the
 * speed of blocked matrix products.
 *
 * <p>The practical variant (top-k mode) returns instead the {@code count} targets of highest logit,
 * best first (ties: the lower node first), distinct; the pass keeps the {@code keep} best nodes of
 * each query, and a query asked for more is scored again alone.
 *
 * <p>A logit is {@code beta} times {@link SgTreeSnapshot#tileScore}, within float rounding of
 * {@link io.dynnibal.index.sgtree.TreeView#dot}'s, which the tree's other samplers score with.
 */
public final class ExactSampler implements NegativeSampler {
  private static final Samples NONE = new Samples(new int[0], new double[0], 0, 0);

  private final double beta;
  private final boolean best;
  private final int keep;

  /**
   * Draws from the softmax ({@code best} false) or the best targets, up to {@code keep} cheaply.
   */
  public ExactSampler(double beta, boolean best, int keep) {
    if (keep < 1) {
      throw new IllegalArgumentException("keep must be at least 1, got " + keep);
    }
    this.beta = beta;
    this.best = best;
    this.keep = keep;
  }

  /** As {@link #ExactSampler(double, boolean, int)}, a top-k pass keeping 16 nodes. */
  public ExactSampler(double beta, boolean best) {
    this(beta, best, 16);
  }

  @Override
  public Prepared prepare(SgTree tree, float[] query, float[] position) {
    return prepareAll(tree, new float[][] {query}, null)[0];
  }

  @Override
  public Prepared[] prepareAll(SgTree tree, float[][] queries, float[][] positions) {
    Prepared[] out = new Prepared[queries.length];
    SgTreeSnapshot view = tree.snapshot();
    if (view == null) {
      java.util.Arrays.fill(out, (Prepared) (count, random) -> NONE);
      return out;
    }
    CacheSoftmax.Scored[] scored = CacheSoftmax.score(view, queries, beta, best ? keep : 0);
    for (int q = 0; q < queries.length; q++) {
      CacheSoftmax.Scored s = scored[q];
      out[q] = best ? (count, random) -> best(view, s, count) : new Draws(view, s, beta);
    }
    return out;
  }

  /** The {@code count} best targets: the best nodes' own targets, best node first. */
  private Samples best(SgTreeSnapshot view, CacheSoftmax.Scored s, int count) {
    if (count > s.bestNodes.length && s.best == s.bestNodes.length) {
      s = CacheSoftmax.score(view, new float[][] {s.query}, beta, count)[0];
    }
    int targets = 0;
    for (int i = 0; i < s.best; i++) {
      targets += view.ownTargetCount(s.bestNodes[i]);
    }
    int size = Math.min(count, targets);
    int[] chosen = new int[size];
    double[] logits = new double[size];
    int next = 0;
    for (int i = 0; i < s.best && next < size; i++) {
      int node = s.bestNodes[i];
      for (int k = 0; k < view.ownTargetCount(node) && next < size; k++) {
        chosen[next] = view.ownTarget(node, k);
        logits[next++] = beta * s.bestScores[i];
      }
    }
    return new Samples(chosen, logits, 0, 0, s.logMass);
  }

  /** Draws for one query: a tile by its mass, a node of it, a target of the node. */
  private static final class Draws implements Prepared {
    private final SgTreeSnapshot view;
    private final CacheSoftmax.Scored scored;
    private final double beta;
    private CumulativeWeights tiles;
    private int lastTile = -1;
    private CumulativeWeights nodes;
    private final float[] scores = new float[TileScores.ROWS];
    private final double[] logits = new double[TileScores.ROWS];

    Draws(SgTreeSnapshot view, CacheSoftmax.Scored scored, double beta) {
      this.view = view;
      this.scored = scored;
      this.beta = beta;
    }

    @Override
    public Samples sample(int count, RandomGenerator random) {
      if (scored.logMass == Double.NEGATIVE_INFINITY) {
        return NONE;
      }
      if (tiles == null) {
        double[] mass = new double[scored.tileLogMass.length];
        for (int t = 0; t < mass.length; t++) {
          mass[t] = Math.exp(scored.tileLogMass[t] - scored.logMass);
        }
        tiles = new CumulativeWeights(mass);
      }
      int[] targets = new int[count];
      double[] drawn = new double[count];
      // The draws' tiles first, then each tile scored once for all the draws that fell in it.
      long[] byTile = new long[count];
      for (int s = 0; s < count; s++) {
        byTile[s] = ((long) tiles.draw(random) << 32) | s;
      }
      java.util.Arrays.sort(byTile);
      for (long entry : byTile) {
        int tile = (int) (entry >>> 32);
        int s = (int) entry;
        if (tile != lastTile) {
          scoreTile(tile);
        }
        int node = tile * TileScores.ROWS + nodes.draw(random);
        int own = view.ownTargetCount(node);
        targets[s] = view.ownTarget(node, own == 1 ? 0 : random.nextInt(own));
        drawn[s] = logits[node - tile * TileScores.ROWS];
      }
      return new Samples(targets, drawn, 0, 0, scored.logMass);
    }

    /** The tile's nodes weighted by their own targets' mass, for this query. */
    private void scoreTile(int tile) {
      int first = tile * TileScores.ROWS;
      int rows = Math.min(TileScores.ROWS, view.nodeCount() - first);
      view.tileScores(scored.query, first, rows, scores);
      double max = Double.NEGATIVE_INFINITY;
      for (int r = 0; r < rows; r++) {
        logits[r] = beta * scores[r];
        if (view.ownTargetCount(first + r) > 0) {
          max = Math.max(max, logits[r]);
        }
      }
      double[] weights = new double[rows];
      for (int r = 0; r < rows; r++) {
        int own = view.ownTargetCount(first + r);
        weights[r] = own == 0 ? 0 : own * Math.exp(logits[r] - max);
      }
      nodes = new CumulativeWeights(weights);
      lastTile = tile;
    }
  }
}
