package io.dynnibal.index.sampling;

import io.dynnibal.index.sgtree.SgNode;
import io.dynnibal.index.sgtree.TreeView;
import java.util.Arrays;
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
 * P/Q} is unchanged; that the chain gets closer to the softmax in as many steps is an empirical
 * property, not a guarantee. The normaliser, which the shards use as their softmax mass, counts the
 * weighed clusters' exact mass.
 */
public final class ClusterProposal {
  private final Partition partition;
  private final int[] clusterOf; // proposal cluster index -> partition index
  private final int clusters; // proposal clusters: the first entries of the arrays by their index
  private final double[] logWeights; // by proposal cluster index, unnormalised
  private final CumulativeWeights weights;
  private final double logNormaliser;
  private final float[] query;
  private final double beta;
  private final int exactInside;
  private final Inside[] inside; // by proposal cluster index, filled when a cluster is first drawn
  private final ProposalWorkspace workspace; // null: arrays of its own
  private Members members; // scratch for gathering a small cluster, made on first use

  /** {@code Math.log(n)} for the counts most clusters hold, read instead of computed. */
  private static final double[] LOG_OF_COUNT = new double[1025];

  static {
    for (int n = 0; n < LOG_OF_COUNT.length; n++) {
      LOG_OF_COUNT[n] = Math.log(n);
    }
  }

  private static double logOf(int count) {
    return count < LOG_OF_COUNT.length ? LOG_OF_COUNT[count] : Math.log(count);
  }

  /** A proposal over all clusters of the partition. */
  public ClusterProposal(Partition partition, double beta) {
    this(partition, beta, allClusters(partition.size()));
  }

  /**
   * A proposal over a subset of the clusters only (the paper's practical top-k variant). It puts no
   * mass outside them, so it is an approximation, not a valid proposal for the full softmax.
   */
  public ClusterProposal(Partition partition, double beta, int[] clusters) {
    this(partition, beta, clusters, clusters.length, null, 0, 0, null);
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
    this(partition, beta, query, exactInside, exactTargets, null);
  }

  /**
   * As {@link #ClusterProposal(Partition, double, float[], int, int)}, in {@code workspace}'s
   * arrays (null: arrays of its own): the proposal holds until the workspace's next one.
   */
  public ClusterProposal(
      Partition partition,
      double beta,
      float[] query,
      int exactInside,
      int exactTargets,
      ProposalWorkspace workspace) {
    this(
        partition,
        beta,
        workspace == null ? allClusters(partition.size()) : workspace.identity(partition.size()),
        partition.size(),
        query,
        exactInside,
        exactTargets,
        workspace);
  }

  private ClusterProposal(
      Partition partition,
      double beta,
      int[] clusterOf,
      int clusters,
      float[] query,
      int exactInside,
      int exactTargets,
      ProposalWorkspace workspace) {
    if (clusters == 0) {
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
    if (exactInside > 0 && partition.view() == null) {
      throw new IllegalArgumentException(
          "exact draws inside clusters read the tree through the view the partition was found on;"
              + " this partition has none");
    }
    this.partition = partition;
    this.beta = beta;
    this.clusterOf = clusterOf;
    this.clusters = clusters;
    this.query = query;
    this.exactInside = exactInside;
    this.workspace = workspace;
    if (exactInside == 0) {
      inside = null;
    } else {
      inside = workspace == null ? new Inside[clusters] : workspace.inside(clusters);
    }
    logWeights = workspace == null ? new double[clusters] : workspace.logWeights(clusters);
    for (int i = 0; i < clusters; i++) {
      int c = clusterOf[i];
      logWeights[i] = logOf(partition.size(c)) + beta * partition.representativeScores()[c];
    }
    if (exactInside > 0 && exactTargets > 0) {
      weighHeaviestExactly(exactTargets);
    }
    double max = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < clusters; i++) {
      max = Math.max(max, logWeights[i]);
    }
    double[] w = workspace == null ? new double[clusters] : workspace.weights(clusters);
    for (int i = 0; i < clusters; i++) {
      w[i] = Math.exp(logWeights[i] - max);
    }
    this.weights = CumulativeWeights.inPlace(w, clusters);
    this.logNormaliser = max + Math.log(weights.total());
  }

  /**
   * Weighs the heaviest small clusters by their exact mass until they hold {@code budget} targets.
   * Only the mass is kept: a query weighs hundreds of clusters and draws from a few, whose members
   * are gathered and scored again when first drawn ({@link Inside}).
   */
  private void weighHeaviestExactly(int budget) {
    // The small clusters as (weight, index) packed in a long, taken heaviest first from a binary
    // max-heap: few of them are taken, so heapifying and popping those is cheaper than sorting all
    // (and a primitive key cheaper than a boxed sort with a comparator). The order only decides
    // which clusters are scored, so the weight's float precision is enough; the index makes every
    // key distinct.
    long[] heap = workspace == null ? new long[clusters] : workspace.heap(clusters);
    int n = 0;
    for (int i = 0; i < clusters; i++) {
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
      Members m = gather(clusterOf[i]);
      logWeights[i] = m.logMass();
      scored += m.targets;
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
      Inside in = inside[drawn];
      if (in == null) {
        in = inside[drawn] = new Inside(gather(c));
      }
      return in.draw(random, logCluster);
    }
    Cluster cluster = partition.clusters().get(c);
    SgNode.Located located = cluster.locate(random.nextInt(partition.size(c)));
    return new Draw(
        located.target(), located.node(), logCluster - logOf(partition.size(c)), Double.NaN);
  }

  /** Block {@code c}'s members, in the scratch arrays (valid until the next gather). */
  private Members gather(int c) {
    if (members == null) {
      members = workspace == null ? new Members(exactInside) : workspace.members(exactInside);
    }
    return members.gather(partition, c, query, beta);
  }

  /**
   * A small cluster's nodes that hold targets, each with its own-target count and exact logit, in
   * the subtree's order (a node, then each child's subtree in turn), gathered from the view of the
   * tree the partition was found on. A snapshot lies breadth first, so a node's children are side
   * by side there, and the block's own node was scored by FindClustering a moment ago: its logit is
   * the block's score. Reused from cluster to cluster.
   */
  static final class Members {
    TreeView tree;
    int[] nodes;
    int[] counts;
    double[] logits;
    int size; // nodes gathered
    int targets; // their targets
    double maxLogit;

    Members(int capacity) {
      nodes = new int[capacity];
      counts = new int[capacity];
      logits = new double[capacity];
    }

    int capacity() {
      return nodes.length;
    }

    /** Gathers and scores block {@code c} of {@code partition}; returns this. */
    Members gather(Partition partition, int c, float[] query, double beta) {
      tree = partition.view();
      int block = partition.nodes()[c];
      size = 0;
      targets = 0;
      // A block holds its node's own targets only (a split node) or its whole subtree; when the
      // two counts agree the children's subtrees hold no target and either reading is the same.
      add(tree, block, partition.size(c) > tree.ownTargetCount(block));
      if (targets != partition.size(c)) {
        throw new IllegalStateException(
            "gathered " + targets + " targets of a block of " + partition.size(c));
      }
      double score = partition.representativeScores()[c];
      maxLogit = Double.NEGATIVE_INFINITY;
      for (int k = 0; k < size; k++) {
        logits[k] = beta * (nodes[k] == block ? score : tree.dot(query, nodes[k]));
        maxLogit = Math.max(maxLogit, logits[k]);
      }
      return this;
    }

    private void add(TreeView tree, int node, boolean withChildren) {
      int own = tree.ownTargetCount(node);
      if (own > 0) {
        if (targets + own > nodes.length) {
          throw new IllegalStateException("a small cluster holds more targets than exactInside");
        }
        nodes[size] = node;
        counts[size++] = own;
        targets += own;
      }
      if (withChildren) {
        for (int child = tree.firstChild(node), end = child + tree.childCount(node);
            child < end;
            child++) {
          add(tree, child, true);
        }
      }
    }

    /** Node {@code k}'s share of the block's softmax mass, unnormalised: its targets' weight. */
    double weight(int k) {
      return counts[k] * Math.exp(logits[k] - maxLogit);
    }

    /** {@code log sum exp(beta <x, y>)} over the block's targets, the weights summed in order. */
    double logMass() {
      double sum = 0;
      for (int k = 0; k < size; k++) {
        sum += weight(k);
      }
      return maxLogit + Math.log(sum);
    }
  }

  /**
   * A drawn small cluster's softmax: a node by its targets' weight, then one of its own targets
   * uniformly (they share its vector). Its mass is the one the cluster was weighed with, bit for
   * bit: the same weights summed in the same order.
   */
  static final class Inside {
    private final TreeView tree;
    private final int[] nodes;
    private final int[] counts;
    private final double[] logits;
    private final double logMass;
    private final CumulativeWeights weights;

    Inside(Members members) {
      int n = members.size;
      tree = members.tree;
      nodes = Arrays.copyOf(members.nodes, n);
      counts = Arrays.copyOf(members.counts, n);
      logits = Arrays.copyOf(members.logits, n);
      double[] w = new double[n];
      for (int k = 0; k < n; k++) {
        w[k] = members.weight(k);
      }
      weights = new CumulativeWeights(w);
      logMass = members.maxLogit + Math.log(weights.total());
    }

    Draw draw(RandomGenerator random, double logCluster) {
      int k = weights.draw(random);
      int own = counts[k] == 1 ? 0 : random.nextInt(counts[k]);
      return new Draw(
          tree.ownTarget(nodes[k], own),
          tree.node(nodes[k]),
          logCluster + logits[k] - logMass, // Q(C) p(y | C)
          logits[k]);
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
