package io.dynnibal.index.sampling;

import io.dynnibal.index.VectorMath;
import io.dynnibal.index.sgtree.SgNode;
import io.dynnibal.index.sgtree.SgTree;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * FindClustering (paper Alg. 2): an adaptive clustering of all targets for one query, coarse far
 * from the query and fine near it. A subtree is split (into its node's own targets and one subtree
 * per child) when
 *
 * <ol>
 *   <li>(Prop. 2) its maxd exceeds {@code log(gamma) / (2 beta |x|)}: after all such splits {@code
 *       P(y|x) / Q(y|x) <= gamma} for every target; or
 *   <li>(Alg. 2's refinement) its maxd exceeds {@code deepestRadius} and it may hold a target
 *       within {@code deepestRadius} of the query ({@code d(x, rep) - maxd <= deepestRadius}); with
 *       the tree's levels, {@code deepestRadius = b^m}.
 * </ol>
 *
 * Subtrees are considered best first by the softmax mass they can hold at most, {@code size *
 * exp(beta (<x, rep> + |x| maxd))}, so when the budget ({@code maxClusters}, the paper's frontier
 * cap) stops the splitting, it has gone to the clusters that can hold the most probability. The
 * root is always split and does not count against the budget: its children are the coarsest
 * clustering the tree offers (Alg. 2's start), and their number grows with the corpus (about 100 at
 * 10^5 targets, 300 at 10^6 in the benchmark). Splitting keeps every target in exactly one cluster.
 * The paper splits by level; maxd gives the same bounds and is tighter. {@link
 * Partition#gammaBound()} reports the guarantee actually reached.
 */
public final class FindClustering {

  /**
   * @param beta score scale of the softmax {@code exp(beta <x, y>)}
   * @param gamma the allowed ratio {@code max P/Q} (Prop. 2), greater than 1
   * @param deepestRadius refine clusters near the query down to this radius ({@code b^m}); 0
   *     refines to leaves
   * @param maxClusters the budget: clusters that splits below the root may add (the partition has
   *     at most {@code 1 + root's children + maxClusters})
   */
  public record Options(double beta, double gamma, double deepestRadius, int maxClusters) {
    public Options {
      if (!(beta > 0) || Double.isInfinite(beta)) {
        throw new IllegalArgumentException("beta must be positive and finite, got " + beta);
      }
      if (!(gamma > 1)) {
        throw new IllegalArgumentException("gamma must be greater than 1, got " + gamma);
      }
      if (!(deepestRadius >= 0)) {
        throw new IllegalArgumentException("deepestRadius must be >= 0, got " + deepestRadius);
      }
      if (maxClusters < 0) {
        throw new IllegalArgumentException("maxClusters must be >= 0, got " + maxClusters);
      }
    }

    /**
     * The paper's parametrisation by tree levels: start where clusters have radius {@code
     * b^startLevel} (so gamma is {@code exp(2 beta b^startLevel)} for a unit-norm query, Prop. 2)
     * and refine down to {@code b^deepestLevel}.
     */
    public static Options atLevels(
        double beta, double base, int startLevel, int deepestLevel, int maxClusters) {
      return new Options(
          beta,
          Math.exp(2 * beta * Math.pow(base, startLevel)),
          Math.pow(base, deepestLevel),
          maxClusters);
    }
  }

  private FindClustering() {}

  /**
   * A block in the making: a subtree, or ({@code ownOnly}) what is left of one after its split.
   * Ordered by {@code priority}, highest first: the log of the subtree's envelope mass, {@code log
   * size + beta (<x, rep> + |x| maxd)}, an upper bound on the softmax mass it can hold.
   */
  private record Candidate(
      SgNode node, boolean ownOnly, double score, double distance, double priority)
      implements Comparable<Candidate> {
    @Override
    public int compareTo(Candidate other) {
      return Double.compare(other.priority, priority);
    }
  }

  public static Partition find(SgTree tree, float[] query, Options options) {
    SgNode root = tree.root();
    if (root == null) {
      return new Partition(List.of(), new double[0], 1);
    }
    double queryNorm = VectorMath.norm(query);
    double startRadius =
        queryNorm == 0
            ? Double.POSITIVE_INFINITY
            : Math.log(options.gamma()) / (2 * options.beta() * queryNorm);

    long cap = root.childCount() + 1L + options.maxClusters();
    int expected = (int) Math.min(cap, tree.size()) + 1;
    List<Candidate> done = new ArrayList<>(expected);
    PriorityQueue<Candidate> open = new PriorityQueue<>(expected);
    double querySquaredNorm = queryNorm * queryNorm;
    open.add(candidate(root, query, queryNorm, querySquaredNorm, options.beta()));
    int total = 1; // clusters in done + open
    while (!open.isEmpty()) {
      Candidate c = open.poll();
      SgNode node = c.node();
      boolean wide = node.maxDistance() > startRadius;
      boolean near =
          node.maxDistance() > options.deepestRadius()
              && c.distance() - node.maxDistance() <= options.deepestRadius();
      boolean affordable = node == root || (long) total + node.childCount() <= cap;
      if (node.childCount() == 0 || !(wide || near) || !affordable) {
        done.add(c);
        continue;
      }
      done.add(new Candidate(node, true, c.score(), c.distance(), c.priority()));
      for (int i = 0; i < node.childCount(); i++) {
        open.add(candidate(node.child(i), query, queryNorm, querySquaredNorm, options.beta()));
      }
      total += node.childCount();
    }

    List<Cluster> clusters = new ArrayList<>(done.size());
    double[] scores = new double[done.size()];
    double widestRadius = 0;
    for (Candidate c : done) {
      Cluster cluster = new Cluster(c.node(), c.ownOnly());
      scores[clusters.size()] = c.score();
      clusters.add(cluster);
      widestRadius = Math.max(widestRadius, cluster.radius());
    }
    return new Partition(clusters, scores, Math.exp(2 * options.beta() * queryNorm * widestRadius));
  }

  private static Candidate candidate(
      SgNode node, float[] query, double queryNorm, double querySquaredNorm, double beta) {
    double score = VectorMath.dot(query, node.vector());
    double distance = VectorMath.distanceFromDot(score, querySquaredNorm, node.squaredNorm());
    double priority = Math.log(node.size()) + beta * (score + queryNorm * node.maxDistance());
    return new Candidate(node, false, score, distance, priority);
  }
}
