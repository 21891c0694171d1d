package io.dynnibal.index.sampling;

import io.dynnibal.index.TopScores;
import io.dynnibal.index.sgtree.SgTree;
import io.dynnibal.index.sgtree.SgTreeSnapshot;

/**
 * Exact sampling from the softmax {@code P(y|x) ∝ exp(beta <x, y>)} over every target of a tree by
 * scoring all of them: one pass over the tree's flat snapshot (every node's vector side by side,
 * {@link SgTreeSnapshot#dots}), then independent draws from the categorical distribution over the
 * nodes, each node weighted by its own targets, and one of those targets uniformly. It is the
 * softmax over the shard's caches that the paper's samplers approximate (the paper's Nyström
 * approximation without the tree's): no partition, no restarts, no chain, and the exact normaliser
 * as {@link Samples#logMass}. Its cost is the whole tree's inner products for each query.
 *
 * <p>The practical variant (top-k mode) returns instead the {@code count} targets of highest logit,
 * best first (ties: the lower node first), distinct.
 *
 * <p>A logit is {@link io.dynnibal.index.sgtree.TreeView#dot}'s, the same number the tree's other
 * samplers score a target with.
 */
public final class ExactSampler implements NegativeSampler {
  private final double beta;
  private final boolean best;

  /**
   * @param best the {@code count} best targets instead of {@code count} draws from the softmax
   */
  public ExactSampler(double beta, boolean best) {
    this.beta = beta;
    this.best = best;
  }

  @Override
  public Prepared prepare(SgTree tree, float[] query, float[] position) {
    SgTreeSnapshot view = tree.snapshot();
    if (view == null) {
      return (count, random) -> new Samples(new int[0], new double[0], 0, 0);
    }
    int n = view.nodeCount();
    double[] logits = new double[n];
    view.dots(query, 0, n, logits);
    double max = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < n; i++) {
      logits[i] *= beta;
      if (view.ownTargetCount(i) > 0) {
        max = Math.max(max, logits[i]);
      }
    }
    if (best) {
      double sum = 0;
      for (int i = 0; i < n; i++) {
        int own = view.ownTargetCount(i);
        sum += own == 0 ? 0 : own * Math.exp(logits[i] - max);
      }
      double logMass = max + Math.log(sum);
      return (count, random) -> best(view, logits, count, logMass);
    }
    double[] weights = new double[n];
    for (int i = 0; i < n; i++) {
      int own = view.ownTargetCount(i);
      weights[i] = own == 0 ? 0 : own * Math.exp(logits[i] - max);
    }
    CumulativeWeights nodes = new CumulativeWeights(weights);
    double logMass = max + Math.log(nodes.total());
    return (count, random) -> {
      int[] targets = new int[count];
      double[] drawn = new double[count];
      for (int s = 0; s < count; s++) {
        int node = nodes.draw(random);
        int own = view.ownTargetCount(node);
        targets[s] = view.ownTarget(node, own == 1 ? 0 : random.nextInt(own));
        drawn[s] = logits[node];
      }
      return new Samples(targets, drawn, 0, 0, logMass);
    };
  }

  /** The {@code count} best targets: the best nodes' own targets, best node first. */
  private static Samples best(SgTreeSnapshot view, double[] logits, int count, double logMass) {
    int[] nodes =
        TopScores.of(logits.length, count, i -> logits[i], i -> view.ownTargetCount(i) > 0);
    int targets = 0;
    for (int node : nodes) {
      targets += view.ownTargetCount(node);
    }
    int size = Math.min(count, targets);
    int[] chosen = new int[size];
    double[] chosenLogits = new double[size];
    int next = 0;
    for (int node : nodes) {
      for (int k = 0; k < view.ownTargetCount(node) && next < size; k++) {
        chosen[next] = view.ownTarget(node, k);
        chosenLogits[next++] = logits[node];
      }
    }
    return new Samples(chosen, chosenLogits, 0, 0, logMass);
  }
}
