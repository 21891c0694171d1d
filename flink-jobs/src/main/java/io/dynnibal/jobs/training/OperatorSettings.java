package io.dynnibal.jobs.training;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.trainer.TrainerSettings;
import java.util.List;

/**
 * What the trainer operator receives of the job's settings: only those it reads (it cannot see
 * {@link TrainingJobConfig}, a module above it). The shards' are {@code ShardSettings.of}.
 */
public final class OperatorSettings {
  private OperatorSettings() {}

  /** What the trainer operator reads of the job's settings. */
  public static TrainerSettings trainer(TrainingJobConfig c) {
    return new TrainerSettings(
        c.model(),
        c.sampler(),
        c.seed,
        c.learningRate,
        c.gradientClipNorm,
        c.warmupSteps,
        c.uniformWarmupSteps,
        c.decaySteps,
        c.maxSteps,
        c.reencodeEvery,
        c.reencodeExactBelow,
        c.landmarks,
        c.regressionSamples,
        c.negativesPerExample,
        c.negativesMode(),
        c.negativesSharpness,
        c.negativesCorrection(),
        c.negativeCacheSize,
        c.keepModelEvery,
        c.snapshotDir,
        c.pairsTopic(),
        List.of(c.watchTargets.split(",")));
  }
}
