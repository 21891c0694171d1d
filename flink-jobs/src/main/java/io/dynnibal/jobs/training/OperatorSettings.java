package io.dynnibal.jobs.training;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.shard.ShardSettings;
import io.dynnibal.trainer.TrainerSettings;
import java.util.List;

/** The settings each operator of the job receives: only those it reads. */
final class OperatorSettings {
  private OperatorSettings() {}

  /** What the trainer operator reads of the job's settings. */
  public static TrainerSettings trainer(TrainingJobConfig c) {
    return new TrainerSettings(
        c.model(),
        c.sampler(),
        c.seed,
        c.learningRate,
        c.warmupSteps,
        c.decaySteps,
        c.maxSteps,
        c.reencodeEvery,
        c.landmarks,
        c.regressionSamples,
        c.negativesSampled,
        c.negativesPerQuery,
        c.negativeCacheSize,
        c.keepModelEvery,
        c.snapshotDir,
        c.pairsTopic(),
        List.of(c.watchTargets.split(",")));
  }

  /** What the shard operator reads of the job's settings. */
  static ShardSettings shard(TrainingJobConfig c) {
    return ShardSettings.of(c);
  }
}
