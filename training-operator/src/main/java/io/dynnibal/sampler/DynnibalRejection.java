package io.dynnibal.sampler;

import io.dynnibal.settings.Setting;
import java.io.Serializable;

/**
 * {@code dynnibal-rejection}, the paper's exact sampler: each shard partitions its SG tree with
 * FindClustering (Alg. 1) until the ratio of the softmax to the cluster proposal is at most gamma,
 * then draws by rejection (Alg. 2); in top-k mode it keeps the best of its exact samples. Exact
 * sampling restarts about gamma times per sample, so it is left out of a routine comparison.
 *
 * @param gamma target ratio max P/Q of the partition
 * @param maxClusters clusters FindClustering may split off
 */
public record DynnibalRejection(double gamma, int maxClusters) implements Sampler {
  public static final String ID = "dynnibal-rejection";

  /** Its settings. */
  public static final class Settings implements Serializable {
    private static final long serialVersionUID = 1L;

    @Setting(
        value = "rejection sampling: target ratio max P/Q of the partition",
        min = 1,
        aboveMin = true)
    public double rejectionGamma = 100;

    @Setting(value = "rejection sampling: clusters FindClustering may split off", min = 0)
    public int rejectionMaxClusters = 2000;
  }

  static DynnibalRejection of(SamplerSettings s) {
    return new DynnibalRejection(s.rejection.rejectionGamma, s.rejection.rejectionMaxClusters);
  }

  /**
   * Proposals a sample may take before the shard gives up on it: a partition far coarser than gamma
   * asks for restarts far more often than gamma times per sample.
   */
  public long maxProposals() {
    return (long) Math.max(1_000, 100 * gamma);
  }

  @Override
  public String id() {
    return ID;
  }

  @Override
  public <M> M shardMiner(ShardMiners<M> shard) {
    return shard.rejection(this);
  }

  @Override
  public long miningFloats(MiningFloats footprint) {
    return footprint.reencodingMap();
  }

  @Override
  public boolean comparedByDefault() {
    return false;
  }
}
