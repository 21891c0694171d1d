package io.dynnibal.jobs.shard;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.negatives.Sampler;
import java.io.Serializable;

/**
 * What the shard operator reads of the job's settings, and nothing else; each component is named
 * after the setting it carries.
 *
 * @param targetsTopic names the source of a dead-lettered target
 * @param modelUpdatesTopic names the source of a dead-lettered model update
 */
public record ShardSettings(
    DualEncoderConfig model,
    Sampler sampler,
    long seed,
    int landmarks,
    double treeBase,
    int negativesPerExample,
    int minedPerExample,
    NegativesMode negativesMode,
    int negativesUniform,
    int batchSize,
    double snmPoolFraction,
    int snmRefreshEvery,
    int mhCandidatesPerNegative,
    int mhChainLength,
    int mhMaxClusters,
    double rejectionGamma,
    int rejectionMaxClusters,
    int fidelityProbes,
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
        config.negativesPerExample,
        config.minedPerExample(),
        config.negativesMode(),
        config.negativesUniform,
        config.batchSize,
        config.snmPoolFraction,
        config.snmRefreshEvery,
        config.mhCandidatesPerNegative,
        config.mhChainLength,
        config.mhMaxClusters,
        config.rejectionGamma,
        config.rejectionMaxClusters,
        config.fidelityProbes,
        config.targetsTopic(),
        config.modelUpdatesTopic());
  }

  /** Hard negatives a step shares (at most). */
  int hardNegativesPerStep() {
    return sampler.hardNegatives(negativesPerExample, batchSize);
  }

  /** Uniform draws a step makes. */
  int uniformDrawsPerStep() {
    return sampler.uniformDraws(negativesUniform, negativesPerExample, batchSize);
  }

  float scoreScale() {
    return model.scoreScale();
  }
}
