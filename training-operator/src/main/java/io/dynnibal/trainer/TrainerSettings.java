package io.dynnibal.trainer;

import io.dynnibal.model.AdamSettings;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.sampler.Sampler;
import io.dynnibal.sampler.TrainerNegatives;
import io.dynnibal.training.LearningRateSchedule;
import io.dynnibal.training.SamplingCorrection;
import io.dynnibal.training.TrainerConfig;
import java.io.Serializable;
import java.util.List;

/**
 * What the trainer operator reads of the job's settings, and nothing else. Built by the job from
 * its validated settings; each component is named after the setting it carries.
 *
 * @param uniformWarmupSteps steps trained on uniform (and in-batch) negatives only, before any hard
 *     negative
 * @param snapshotDir where model versions go: {@code <snapshotDir>/run-<id>/model-<version>}
 * @param negativesSharpness sample mode draws from {@code exp(negativesSharpness beta score)}
 * @param pairsTopic names the source of a dead-lettered pair
 * @param job the job's name on its model updates (its Kafka consumer group): shards take only their
 *     own job's
 * @param watchTargets ids whose use as a negative is counted in the metrics
 * @param threads libtorch's intra-op threads, set when the trainer opens (the JVM's, not only its
 *     own)
 */
public record TrainerSettings(
    DualEncoderConfig model,
    Sampler sampler,
    long seed,
    float learningRate,
    float gradientClipNorm,
    int warmupSteps,
    int uniformWarmupSteps,
    int decaySteps,
    long maxSteps,
    int reencodeEvery,
    double reencodeExactBelow,
    int landmarks,
    int regressionSamples,
    int negativesPerExample,
    NegativesMode negativesMode,
    double negativesSharpness,
    SamplingCorrection.Mode negativesCorrection,
    float negativesMargin,
    int keepModelEvery,
    String snapshotDir,
    String pairsTopic,
    String job,
    List<String> watchTargets,
    int threads)
    implements Serializable {

  public TrainerSettings {
    watchTargets = List.copyOf(watchTargets);
  }

  /** The scale of the softmax hard negatives come from ({@link NegativesMode#softmaxScale}). */
  public double softmaxScale() {
    return negativesMode.softmaxScale(model.scoreScale(), negativesSharpness);
  }

  /** What the sampler's own negatives, if the trainer finds any, are built from. */
  public TrainerNegatives.Context trainerNegativesContext() {
    return new TrainerNegatives.Context(
        model.outputDim(), negativesPerExample, (float) softmaxScale(), seed);
  }

  /**
   * The optimiser's schedule: linear warm-up, then polynomial decay to 5 % over {@code decaySteps};
   * tables at 10x the networks' rate (a learned-from-scratch bag), or at the same rate for a
   * transformer's pretrained word embeddings; gradients clipped at {@code gradientClipNorm};
   * negatives above {@code negativesMargin} of their query's positive left out.
   */
  public TrainerConfig trainerConfig() {
    return new TrainerConfig(
        new LearningRateSchedule(learningRate, warmupSteps, decaySteps, 0.05f, 1f),
        TrainerConfig.embeddingRateFactor(model.towerKind()),
        AdamSettings.DEFAULT,
        gradientClipNorm,
        negativesMargin);
  }
}
