package io.dynnibal.jobs.config;

import io.dynnibal.settings.Setting;
import io.dynnibal.training.TrainerConfig;
import java.io.Serializable;

/** The training settings group: the batch and the optimiser's schedule. */
public final class TrainingSettings implements Serializable {
  private static final long serialVersionUID = 1L;

  @Setting(value = "queries per training step (B)", min = 1)
  public int batchSize = 128;

  @Setting(
      value =
          "libtorch's intra-op threads, set by the trainer when it starts; they are the whole"
              + " JVM's (shards in the same TaskManager use them too): raise it when the trainer is"
              + " what the job waits for and the cores are otherwise idle",
      min = 1)
  public int trainerThreads = 1;

  @Setting(value = "peak learning rate", min = 0, aboveMin = true)
  public float learningRate = 2e-3f;

  @Setting(
      value = "largest global gradient norm a step applies; larger ones are scaled down (0: off)",
      min = 0)
  public float gradientClipNorm = TrainerConfig.DEFAULT_CLIP_NORM;

  @Setting(value = "learning-rate warm-up steps", min = 0)
  public int warmupSteps = 100;

  @Setting(value = "steps of the learning-rate decay (0: constant after warm-up)", min = 0)
  public int decaySteps = 0;

  /**
   * The paper trains 4,000-8,000 steps on uniform negatives before it switches to DyNNIBAL: hard
   * negatives of an untrained model are noise. The shards still mine during the warm-up (their
   * answers are dropped), so the switch costs no restart.
   */
  @Setting(
      value =
          "steps trained on uniform (and in-batch) negatives only before hard negatives join (0:"
              + " from the first step)",
      min = 0)
  public int uniformWarmupSteps = 0;
}
