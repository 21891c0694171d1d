package io.dynnibal.index.sampling;

import io.dynnibal.index.sgtree.SgNode;
import io.dynnibal.index.sgtree.TreeView;
import java.util.random.RandomGenerator;

/**
 * The proposal Q of Eq. 6 for one query and partition: every target scored through its cluster's
 * representative, {@code Q(y|x) = exp(beta <x, rep(y)>) / sum over clusters C of |C| exp(beta <x,
 * rep(C)>)}. A draw picks a cluster with probability proportional to {@code |C| exp(beta <x,
 * rep(C)>)}, then a target uniformly inside it (by the subtree's descendant counts, one random
 * number).
 *
 * <p>Optionally ({@code exactInside} = S > 0), small clusters are drawn from exactly:
 *
 * <ul>
 *   <li>inside: target y of a cluster C of at most S targets with probability {@code exp(beta <x,
 *       y>) / sum over C}, the members scored the first time the cluster is drawn. Near the query,
 *       where FindClustering leaves small clusters, a uniform draw inside a cluster of radius r
 *       misjudges a target's softmax weight by up to {@code exp(2 beta |x| r)} (e^12 at beta = 20,
 *       r = 0.3): MH rarely proposes the high-mass targets and rejects their neighbours.
 *   <li>the clusters' weights: the small clusters with the largest weights, until they hold {@code
 *       exactTargets} targets, are scored up front and weigh their exact mass {@code sum exp(beta
 *       <x, y>)} instead of {@code |C| exp(beta <x, rep(C)>)}. On those targets Q is the softmax
 *       itself, up to the normaliser.
 * </ul>
 *
 * Q stays positive on every target, so MH stays exact. FindClustering's worst-case bound on {@code
 * P/Q} is unchanged; that the chain gets closer to the softmax in as many steps is measured (bench
 * sampler-fidelity), not guaranteed. The normaliser, which the shards use as their softmax mass,
 * counts the weighed clusters' exact mass.
 */
public final class ClusterProposal {
  private final Partition partition;
  private final int[] clusterOf; // proposal cluster index -> partition index
  private final double[] logWeights; // by proposal cluster index, unnormalised
  private final CumulativeWeights weights;
  private final double logNormaliser;
  private final float[] query;
  private final double beta;
  private final int exactInside;
  private final Inside[] inside; // by proposal cluster index, filled up front or on first draw

  /** A proposal over all clusters of the partition. */
  public ClusterProposal(Partition partition, double beta) {
    this(partition, beta, allClusters(partition.size()));
  }

  /**
   * A proposal over a subset of the clusters only (the paper's practical top-k variant). It puts no
   * mass outside them, so it is an approximation, not a valid proposal for the full softmax.
   */
  public ClusterProposal(Partition partition, double beta, int[] clusters) {
    this(partition, beta, clusters, null, 0, 0);
  }

  /**
   * A proposal over all clusters, drawing exactly inside the clusters of at most {@code
   * exactInside} targets (0: uniformly inside every cluster), the heaviest of them weighed exactly
   * until {@code exactTargets} targets are scored up front.
   *
   * @param query the vector whose inner products with the tree's vectors are the scores
   */
  public ClusterProposal(
      Partition partition, double beta, float[] query, int exactInside, int exactTargets) {
    this(partition, beta, allClusters(partition.size()), query, exactInside, exactTargets);
  }

  private ClusterProposal(
      Partition partition,
      double beta,
      int[] clusters,
      float[] query,
      int exactInside,
      int exactTargets) {
    if (clusters.length == 0) {
      throw new IllegalArgumentException("a proposal needs at least one cluster");
    }
    if (exactInside < 0 || exactTargets < 0 || (exactInside > 0 && query == null)) {
      throw new IllegalArgumentException(
          "exactInside and exactTargets must be >= 0, with the query when exactInside is positive,"
              + " got "
              + exactInside
              + " and "
              + exactTargets);
    }
    this.partition = partition;
    this.beta = beta;
    this.clusterOf = clusters;
    this.query = query;
    this.exactInside = exactInside;
    this.inside = exactInside > 0 ? new Inside[clusters.length] : null;
    logWeights = new double[clusters.length];
    for (int i = 0; i < clusters.length; i++) {
      int c = clusters[i];
      logWeights[i] = Math.log(partition.size(c)) + beta * partition.representativeScores()[c];
    }
    if (exactInside > 0 && exactTargets > 0) {
      weighHeaviestExactly(exactTargets);
    }
    double max = Double.NEGATIVE_INFINITY;
    for (double w : logWeights) {
      max = Math.max(max, w);
    }
    double[] w = new double[clusters.length];
    for (int i = 0; i < clusters.length; i++) {
      w[i] = Math.exp(logWeights[i] - max);
    }
    this.weights = new CumulativeWeights(w);
    this.logNormaliser = max + Math.log(weights.total());
  }

  /** Scores the heaviest small clusters' targets until {@code budget} are scored. */
  private void weighHeaviestExactly(int budget) {
    // The small clusters as (weight, index) packed in a long, taken heaviest first from a binary
    // max-heap: about a hundred of 2,000 are taken, so heapifying and popping those costs a tenth
    // of sorting all (a sort was 5 % of a shard's time; a boxed sort with a comparator cost as
    // much as FindClustering). The order only decides which clusters are scored, so the weight's
    // float precision is enough; the index makes every key distinct.
    long[] heap = new long[clusterOf.length];
    int n = 0;
    for (int i = 0; i < clusterOf.length; i++) {
      int size = partition.size(clusterOf[i]);
      if (size > 0 && size <= exactInside) {
        int bits = Float.floatToIntBits((float) logWeights[i]);
        int sortable = bits ^ ((bits >> 31) & 0x7fffffff);
        heap[n++] = ((long) sortable << 32) | i;
      }
    }
    for (int k = n / 2 - 1; k >= 0; k--) {
      siftDown(heap, k, n);
    }
    int scored = 0;
    while (n > 0 && scored < budget) {
      int i = (int) heap[0];
      heap[0] = heap[--n];
      siftDown(heap, 0, n);
      inside[i] = insideOf(i);
      logWeights[i] = inside[i].logMass;
      scored += inside[i].targets.length;
    }
  }

  /** Restores the max-heap order of {@code heap[0, n)} below position {@code k}. */
  private static void siftDown(long[] heap, int k, int n) {
    long key = heap[k];
    int half = n >>> 1;
    while (k < half) {
      int child = 2 * k + 1;
      if (child + 1 < n && heap[child + 1] > heap[child]) {
        child++;
      }
      if (heap[child] <= key) {
        break;
      }
      heap[k] = heap[child];
      k = child;
    }
    heap[k] = key;
  }

  /**
   * {@code log sum over clusters C of w(C)}, {@code w(C) = |C| exp(beta <x, rep(C)>)} or the exact
   * mass of a cluster weighed exactly: an estimate of the softmax normaliser of the proposal's
   * targets.
   */
  public double logNormaliser() {
    return logNormaliser;
  }

  /**
   * A target drawn from Q, with what MH needs to weigh it: {@code logit}, {@code beta <x, y>}, when
   * the proposal scored the target to draw it (inside a small cluster), NaN otherwise.
   */
  public record Draw(int target, SgNode node, double logQ, double logit) {
    /** {@code beta <x, y>}: the proposal's own score when it has one, else computed. */
    public double logit(float[] query, double beta) {
      return Double.isNaN(logit) ? beta * node.dot(query) : logit;
    }
  }

  public Draw draw(RandomGenerator random) {
    int drawn = weights.draw(random);
    int c = clusterOf[drawn];
    double logCluster = logWeights[drawn] - logNormaliser; // log Q(C)
    if (inside != null && partition.size(c) <= exactInside) {
      Inside members = inside[drawn];
      if (members == null) {
        members = inside[drawn] = insideOf(drawn);
      }
      int i = members.weights.draw(random);
      return new Draw(
          members.targets[i],
          members.nodes[i],
          logCluster + members.logits[i] - members.logMass, // Q(C) p(y | C)
          members.logits[i]);
    }
    Cluster cluster = partition.clusters().get(c);
    SgNode.Located located = cluster.locate(random.nextInt(partition.size(c)));
    return new Draw(
        located.target(), located.node(), logCluster - Math.log(partition.size(c)), Double.NaN);
  }

  private Inside insideOf(int i) {
    int c = clusterOf[i];
    double score = partition.representativeScores()[c];
    if (partition.view() != null) {
      return Inside.of(
          partition.view(),
          partition.nodes()[c],
          partition.clusters().get(c).ownOnly(),
          partition.size(c),
          score,
          query,
          beta);
    }
    return Inside.of(partition.clusters().get(c), score, query, beta);
  }

  /** A small cluster's targets with their exact logits, for draws from the softmax inside it. */
  private record Inside(
      int[] targets, SgNode[] nodes, double[] logits, double logMass, CumulativeWeights weights) {
    /**
     * @param score {@code <x, rep>} of the cluster's representative, which its own targets share
     *     (the first collected): every leaf cluster is scored without an inner product
     */
    static Inside of(Cluster cluster, double score, float[] query, double beta) {
      int n = cluster.size();
      int[] targets = new int[n];
      SgNode[] nodes = new SgNode[n];
      double[] logits = new double[n];
      cluster.collect(targets, nodes);
      for (int i = 0; i < n; i++) {
        // A node's own targets share its vector: score it once.
        if (nodes[i] == cluster.node()) {
          logits[i] = beta * score;
        } else if (i > 0 && nodes[i] == nodes[i - 1]) {
          logits[i] = logits[i - 1];
        } else {
          logits[i] = beta * nodes[i].dot(query);
        }
      }
      return of(targets, nodes, logits);
    }

    /**
     * As {@link #of(Cluster, double, float[], double)} for the block of node {@code node} of the
     * view the partition was found on, read there (the same targets in the same order, the same
     * logits): in a snapshot the block's node was scored with its siblings by FindClustering a
     * moment ago, and each node's children below it lie side by side.
     */
    static Inside of(
        TreeView tree,
        int node,
        boolean ownOnly,
        int size,
        double score,
        float[] query,
        double beta) {
      int[] targets = new int[size];
      int[] at = new int[size];
      int n = collect(tree, node, ownOnly ? node : -1, targets, at, 0);
      if (n != size) {
        throw new IllegalStateException("collected " + n + " of a block of " + size);
      }
      SgNode[] nodes = new SgNode[n];
      double[] logits = new double[n];
      for (int i = 0; i < n; i++) {
        nodes[i] = tree.node(at[i]);
        if (at[i] == node) {
          logits[i] = beta * score;
        } else if (i > 0 && at[i] == at[i - 1]) {
          logits[i] = logits[i - 1];
        } else {
          logits[i] = beta * tree.dot(query, at[i]);
        }
      }
      return of(targets, nodes, logits);
    }

    /** {@link Cluster#collect}'s order: a node's own targets, then each child's subtree in turn. */
    private static int collect(
        TreeView tree, int node, int ownOnly, int[] targets, int[] at, int n) {
      int own = tree.ownTargetCount(node);
      if (n + own > targets.length) {
        throw new IllegalStateException("a block holds more targets than its size");
      }
      for (int k = 0; k < own; k++) {
        targets[n] = tree.ownTarget(node, k);
        at[n++] = node;
      }
      if (node != ownOnly) {
        for (int c = tree.firstChild(node), end = c + tree.childCount(node); c < end; c++) {
          n = collect(tree, c, ownOnly, targets, at, n);
        }
      }
      return n;
    }

    private static Inside of(int[] targets, SgNode[] nodes, double[] logits) {
      int n = targets.length;
      double max = Double.NEGATIVE_INFINITY;
      for (int i = 0; i < n; i++) {
        max = Math.max(max, logits[i]);
      }
      double[] w = new double[n];
      for (int i = 0; i < n; i++) {
        w[i] = Math.exp(logits[i] - max);
      }
      CumulativeWeights weights = new CumulativeWeights(w);
      return new Inside(targets, nodes, logits, max + Math.log(weights.total()), weights);
    }
  }

  private static int[] allClusters(int n) {
    int[] all = new int[n];
    for (int i = 0; i < n; i++) {
      all[i] = i;
    }
    return all;
  }
}
