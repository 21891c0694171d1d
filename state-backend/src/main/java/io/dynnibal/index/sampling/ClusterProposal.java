package io.dynnibal.index.sampling;

import io.dynnibal.index.sgtree.SgNode;
import java.util.random.RandomGenerator;

/**
 * The proposal Q of Eq. 6 for one query and partition: every target scored through its cluster's
 * representative, {@code Q(y|x) = exp(beta <x, rep(y)>) / sum over clusters C of |C| exp(beta <x,
 * rep(C)>)}. A draw picks a cluster with probability proportional to {@code |C| exp(beta <x,
 * rep(C)>)}, then a target uniformly inside it (by the subtree's descendant counts, one random
 * number).
 */
public final class ClusterProposal {
  private final Partition partition;
  private final double beta;
  private final int[] clusterOf; // proposal cluster index -> partition index
  private final CumulativeWeights weights;
  private final double logNormaliser;

  /** A proposal over all clusters of the partition. */
  public ClusterProposal(Partition partition, double beta) {
    this(partition, beta, allClusters(partition.size()));
  }

  /**
   * A proposal over a subset of the clusters only (the paper's practical top-k variant). It puts no
   * mass outside them, so it is an approximation, not a valid proposal for the full softmax.
   */
  public ClusterProposal(Partition partition, double beta, int[] clusters) {
    if (clusters.length == 0) {
      throw new IllegalArgumentException("a proposal needs at least one cluster");
    }
    this.partition = partition;
    this.beta = beta;
    this.clusterOf = clusters;
    double[] logWeights = new double[clusters.length];
    double max = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < clusters.length; i++) {
      int c = clusters[i];
      logWeights[i] =
          Math.log(partition.clusters().get(c).size()) + beta * partition.representativeScores()[c];
      max = Math.max(max, logWeights[i]);
    }
    for (int i = 0; i < clusters.length; i++) {
      logWeights[i] = Math.exp(logWeights[i] - max);
    }
    this.weights = new CumulativeWeights(logWeights);
    this.logNormaliser = max + Math.log(weights.total());
  }

  /**
   * {@code log sum over clusters C of |C| exp(beta <x, rep(C)>)}: the softmax normaliser of the
   * proposal's targets, each scored through its representative.
   */
  public double logNormaliser() {
    return logNormaliser;
  }

  /** A target drawn from Q, with what MH needs to weigh it. */
  public record Draw(int target, SgNode node, double logQ) {}

  public Draw draw(RandomGenerator random) {
    int c = clusterOf[weights.draw(random)];
    Cluster cluster = partition.clusters().get(c);
    SgNode.Located located = cluster.locate(random.nextInt(cluster.size()));
    return new Draw(
        located.target(),
        located.node(),
        beta * partition.representativeScores()[c] - logNormaliser);
  }

  private static int[] allClusters(int n) {
    int[] all = new int[n];
    for (int i = 0; i < n; i++) {
      all[i] = i;
    }
    return all;
  }
}
