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
        c.job.seed,
        c.training.learningRate,
        c.training.gradientClipNorm,
        c.training.warmupSteps,
        c.training.uniformWarmupSteps,
        c.training.decaySteps,
        c.job.maxSteps,
        c.reencode.reencodeEvery,
        c.reencode.reencodeExactBelow,
        c.index.landmarks,
        c.reencode.regressionSamples,
        c.negatives.negativesPerExample,
        c.negativesMode(),
        c.negatives.negativesSharpness,
        c.negativesCorrection(),
        (float) c.negatives.negativesMargin,
        c.job.keepModelEvery,
        c.job.snapshotDir,
        c.pairsTopic(),
        c.kafka.groupId,
        List.of(c.job.watchTargets.split(",")),
        c.training.trainerThreads);
  }
}
