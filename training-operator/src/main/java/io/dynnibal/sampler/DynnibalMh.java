package io.dynnibal.sampler;

import io.dynnibal.settings.Setting;
import java.io.Serializable;

/**
 * {@code dynnibal-mh}, the paper's practical sampler: each shard projects a query into the Nyström
 * space, partitions its SG tree with FindClustering (Alg. 1) and runs a Metropolis-Hastings chain
 * per negative with the cluster proposal (Alg. 3, Eq. 6), or in top-k mode keeps the best of the
 * closest clusters' targets. The accelerator holds only the re-encoding's landmarks, regression
 * samples and map; the Nyström cache is CPU memory in the shards.
 *
 * @param candidatesPerNegative top-k mode: targets per negative the closest clusters must hold
 * @param chainLength sample mode: proposals per chain
 * @param exactInside sample mode: clusters of at most this many targets are drawn from exactly
 * @param exactTargets sample mode: the heaviest small clusters weighed exactly, up to this many
 *     targets
 * @param clusterShare FindClustering's budget as a share of the shard's targets (0: the cap alone)
 * @param maxClusters the cap of the budget
 */
public record DynnibalMh(
    int candidatesPerNegative,
    int chainLength,
    int exactInside,
    int exactTargets,
    double clusterShare,
    int maxClusters)
    implements Sampler {
  public static final String ID = "dynnibal-mh";

  /** Its settings. */
  public static final class Settings implements Serializable {
    private static final long serialVersionUID = 1L;

    @Setting(
        value =
            "MH in top-k mode: the proposal keeps the closest clusters holding this many targets"
                + " per negative",
        min = 0)
    public int mhCandidatesPerNegative = 8;

    @Setting(value = "MH in sample mode: proposals per chain (one chain per negative)", min = 1)
    public int mhChainLength = 8;

    /**
     * Eq. 6 draws uniformly inside a cluster, which misjudges the weights of targets near the
     * query; drawing exactly inside small clusters lets the chain propose the heaviest ones.
     */
    @Setting(
        value =
            "MH in sample mode: the proposal draws from the exact softmax inside clusters of at"
                + " most this many targets, uniformly inside larger ones (0: uniformly inside every"
                + " cluster, the paper's Eq. 6)",
        min = 0)
    public int mhExactInside = 64;

    @Setting(
        value =
            "MH in sample mode: the proposal weighs the heaviest clusters of mh.exact.inside"
                + " targets or fewer by their exact softmax mass until they hold this many targets"
                + " (0: none; no effect when mh.exact.inside is 0)",
        min = 0)
    public int mhExactTargets = 1024;

    /**
     * The proposal's quality is its budget of clusters, and the budget a given fidelity takes grows
     * with the shard, so it is a share of the shard's targets: every target the shard stores with a
     * cache vector, in the pool or not (under {@code negatives.pool=positives} the pool starts
     * empty and grows). The cost per query grows with it, which {@code mh.max.clusters} caps.
     */
    @Setting(
        value =
            "MH: FindClustering's budget of clusters per query, as a share of the shard's targets"
                + " (at most mh.max.clusters; 0: mh.max.clusters alone)",
        min = 0,
        max = 1)
    public double mhClusterShare = 0.05;

    @Setting(
        value =
            "MH: FindClustering's frontier, clusters kept per query at most (the cap of"
                + " mh.cluster.share)",
        min = 0)
    public int mhMaxClusters = 4096;
  }

  static DynnibalMh of(SamplerSettings s) {
    Settings m = s.mh;
    return new DynnibalMh(
        m.mhCandidatesPerNegative,
        m.mhChainLength,
        m.mhExactInside,
        m.mhExactTargets,
        m.mhClusterShare,
        m.mhMaxClusters);
  }

  /**
   * FindClustering's budget for the proposal over a shard of {@code targets}: {@code clusterShare}
   * of them, at most {@code maxClusters}.
   */
  public int clusters(int targets) {
    return clusterShare == 0
        ? maxClusters
        : (int) Math.min(maxClusters, Math.round(clusterShare * targets));
  }

  @Override
  public String id() {
    return ID;
  }

  @Override
  public <M> M shardMiner(ShardMiners<M> shard) {
    return shard.metropolisHastings(this);
  }

  @Override
  public long miningFloats(MiningFloats footprint) {
    return footprint.reencodingMap();
  }
}
