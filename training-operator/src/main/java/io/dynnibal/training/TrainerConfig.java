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
 */
public record TrainerConfig(
    LearningRateSchedule schedule, float embeddingRateFactor, AdamSettings adam) {

  /**
   * Settings for a model trained from scratch: peak 2e-3 (networks) and 2e-2 (tables) after {@code
   * warmupSteps}, linear decay to 5 % at {@code totalSteps}. The paper fine-tunes pretrained
   * encoders at 1e-5; a from-scratch model needs rates two orders of magnitude higher.
   */
  public static TrainerConfig fromScratch(int warmupSteps, int totalSteps) {
    return new TrainerConfig(
        new LearningRateSchedule(2e-3f, warmupSteps, totalSteps, 0.05f, 1f),
        10f,
        AdamSettings.DEFAULT);
  }

  public TrainerConfig {
    if (schedule == null || adam == null) {
      throw new IllegalArgumentException("schedule and adam settings are required");
    }
    if (!(embeddingRateFactor > 0) || Float.isInfinite(embeddingRateFactor)) {
      throw new IllegalArgumentException(
          "embeddingRateFactor must be positive and finite, got " + embeddingRateFactor);
    }
  }
}
