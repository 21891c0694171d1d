package io.dynnibal.training;

import io.dynnibal.model.AdamSettings;

/**
 * How the trainer optimises.
 *
 * @param schedule learning rate of the dense networks per step
 * @param embeddingRateFactor the embedding tables' rate relative to the networks'. Sparse rows see
 *     a gradient only in the steps whose batch holds their feature, so they need a larger step to
 *     learn in one or two epochs.
 * @param adam Adam's constants
 * @param clipNorm the largest global gradient norm a step applies (networks and tables together); a
 *     larger gradient is scaled down to it. 0: no clipping
 * @param falseNegativeMargin a negative scoring above this share of its query's positive is left
 *     out of that query's softmax ({@link FalseNegativeFilter}); 0: none is
 */
public record TrainerConfig(
    LearningRateSchedule schedule,
    float embeddingRateFactor,
    AdamSettings adam,
    float clipNorm,
    float falseNegativeMargin) {

  /** These settings with {@code schedule} in place of {@link #schedule}. */
  public TrainerConfig withSchedule(LearningRateSchedule schedule) {
    return new TrainerConfig(schedule, embeddingRateFactor, adam, clipNorm, falseNegativeMargin);
  }

  /** Without a false-negative filter. */
  public TrainerConfig(
      LearningRateSchedule schedule, float embeddingRateFactor, AdamSettings adam, float clipNorm) {
    this(schedule, embeddingRateFactor, adam, clipNorm, 0f);
  }

  /**
   * The default {@link #clipNorm}. Adam bounds one step's move, but not what a single outsized
   * gradient leaves in its moments: the first moment carries its direction for about ten more steps
   * while the inflated second moment slows learning for many more. 1.0, the common choice for
   * fine-tuning, lies above healthy norms after the first steps, so it clips only those steps and
   * outliers (docs/findings.md).
   */
  public static final float DEFAULT_CLIP_NORM = 1f;

  /**
   * Settings for a model trained from scratch: peak 2e-3 (networks) and 2e-2 (tables) after {@code
   * warmupSteps}, linear decay to 5 % at {@code totalSteps}. The paper fine-tunes pretrained
   * encoders at 1e-5; a from-scratch model needs rates two orders of magnitude higher.
   */
  /**
   * The embedding tables' rate relative to the networks': 10x for a bag learned from scratch (rows
   * see few gradients each), 1x for a transformer's pretrained word embeddings.
   */
  public static float embeddingRateFactor(io.dynnibal.model.TowerKind kind) {
    return kind == io.dynnibal.model.TowerKind.TRANSFORMER ? 1f : 10f;
  }

  /**
   * Settings for fine-tuning a pretrained transformer in the benchmarks: a constant 5e-5 after one
   * warm-up step, the word embeddings at the same rate, the default clipping.
   */
  public static TrainerConfig fineTuning() {
    return new TrainerConfig(
        new LearningRateSchedule(5e-5f, 1, 0, 0.05f, 1f),
        embeddingRateFactor(io.dynnibal.model.TowerKind.TRANSFORMER),
        AdamSettings.DEFAULT,
        DEFAULT_CLIP_NORM);
  }

  public static TrainerConfig fromScratch(int warmupSteps, int totalSteps) {
    return new TrainerConfig(
        new LearningRateSchedule(2e-3f, warmupSteps, totalSteps, 0.05f, 1f),
        10f,
        AdamSettings.DEFAULT,
        DEFAULT_CLIP_NORM);
  }

  public TrainerConfig {
    if (schedule == null || adam == null) {
      throw new IllegalArgumentException("schedule and adam settings are required");
    }
    if (!(embeddingRateFactor > 0) || Float.isInfinite(embeddingRateFactor)) {
      throw new IllegalArgumentException(
          "embeddingRateFactor must be positive and finite, got " + embeddingRateFactor);
    }
    if (!(falseNegativeMargin >= 0 && falseNegativeMargin <= 1)) {
      throw new IllegalArgumentException(
          "falseNegativeMargin must be 0 (off) to 1, got " + falseNegativeMargin);
    }
    if (!(clipNorm >= 0) || Float.isInfinite(clipNorm)) {
      throw new IllegalArgumentException("clipNorm must be >= 0 and finite, got " + clipNorm);
    }
  }
}
