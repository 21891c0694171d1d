package io.dynnibal.jobs.shard;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.negatives.NegativesPool;
import io.dynnibal.negatives.Sampler;
import io.dynnibal.negatives.UnnamedShare;
import java.io.Serializable;

/**
 * What the shard operator reads of the job's settings, and nothing else; each component is named
 * after the setting it carries.
 *
 * @param hardNegativesPerStep hard negatives a step shares at most (0: the shards mine nothing)
 * @param minedPerExample what the shards mine per query: the dose, or the candidates to re-score
 * @param unnamedShare which unnamed targets join a {@code positives} pool, per model version
 * @param uniformDrawsPerStep uniform draws each shard makes per batch
 * @param reencodeEvery steps between model updates (how long a model version lasts)
 * @param targetsTopic names the source of a dead-lettered target
 * @param modelUpdatesTopic names the source of a dead-lettered model update
 */
public record ShardSettings(
    DualEncoderConfig model,
    Sampler sampler,
    long seed,
    int landmarks,
    double treeBase,
    int hardNegativesPerStep,
    int minedPerExample,
    NegativesMode negativesMode,
    double negativesSharpness,
    NegativesPool negativesPool,
    UnnamedShare unnamedShare,
    int uniformDrawsPerStep,
    double snmPoolFraction,
    int snmRefreshEvery,
    int mhCandidatesPerNegative,
    int mhChainLength,
    int mhExactInside,
    int mhExactTargets,
    double mhClusterShare,
    int mhMaxClusters,
    double rejectionGamma,
    int rejectionMaxClusters,
    int fidelityProbes,
    int reencodeEvery,
    int reencodeExactPerBatch,
    String targetsTopic,
    String modelUpdatesTopic)
    implements Serializable {

  public static ShardSettings of(TrainingJobConfig config) {
    return new ShardSettings(
        config.model(),
        config.sampler(),
        config.seed,
        config.landmarks,
        config.treeBase,
        config.hardNegativesPerStep(),
        config.minedPerExample(),
        config.negativesMode(),
        config.negativesSharpness,
        config.negativesPool(),
        config.unnamedShare(),
        config.uniformDrawsPerStep(),
        config.snmPoolFraction,
        config.snmRefreshEvery,
        config.mhCandidatesPerNegative,
        config.mhChainLength,
        config.mhExactInside,
        config.mhExactTargets,
        config.mhClusterShare,
        config.mhMaxClusters,
        config.rejectionGamma,
        config.rejectionMaxClusters,
        config.fidelityProbes,
        config.reencodeEvery,
        config.reencodeExactPerBatch(),
        config.targetsTopic(),
        config.modelUpdatesTopic());
  }

  float scoreScale() {
    return model.scoreScale();
  }

  /** The scale of the softmax hard negatives come from ({@link NegativesMode#softmaxScale}). */
  double samplingScale() {
    return negativesMode.softmaxScale(model.scoreScale(), negativesSharpness);
  }

  /**
   * FindClustering's budget for the MH proposal over a shard of {@code targets}: {@code
   * mh.cluster.share} of them, at most {@code mh.max.clusters}.
   */
  int mhClusters(int targets) {
    return mhClusterShare == 0
        ? mhMaxClusters
        : (int) Math.min(mhMaxClusters, Math.round(mhClusterShare * targets));
  }
}
