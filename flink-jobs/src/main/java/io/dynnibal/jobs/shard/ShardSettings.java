package io.dynnibal.jobs.shard;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.negatives.NegativesPool;
import io.dynnibal.negatives.UnnamedShare;
import io.dynnibal.sampler.Sampler;
import java.io.Serializable;

/**
 * What the shard operator reads of the job's settings, and nothing else; each component is named
 * after the setting it carries, the sampler with its own settings.
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
        config.job.seed,
        config.index.landmarks,
        config.index.treeBase,
        config.hardNegativesPerStep(),
        config.minedPerExample(),
        config.negativesMode(),
        config.negatives.negativesSharpness,
        config.negativesPool(),
        config.unnamedShare(),
        config.uniformDrawsPerStep(),
        config.negatives.fidelityProbes,
        config.reencode.reencodeEvery,
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
}
