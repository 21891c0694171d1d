package io.dynnibal.model;

import io.dynnibal.model.features.FeatureConfig;
import java.io.Serializable;

/**
 * The shape of a dual encoder. Each tower ({@link TowerKind#BAG}, the default): hashed features ->
 * {@link SparseEmbeddingTable} bag of {@code embeddingDim} -> Linear(hiddenDim) -> GELU ->
 * Linear(outputDim), plus a linear skip path from the bag -> unit norm. Scores are {@code
 * scoreScale * <q, t>}.
 *
 * <p>{@link TowerKind#SET_TRANSFORMER} replaces the bag and MLP by one self-attention layer over
 * the {@code maxTokens} strongest features.
 *
 * @param sharedTowers one tower for queries and targets (the default: both sides are short English
 *     with package names, and one vocabulary learns twice as fast from scratch) or one tower per
 *     side
 * @param scoreScale the paper's beta (inverse temperature), 20 by default
 */
public record DualEncoderConfig(
    FeatureConfig features,
    int embeddingDim,
    int hiddenDim,
    int outputDim,
    boolean sharedTowers,
    float scoreScale,
    TowerKind towerKind,
    int maxTokens)
    implements Serializable {

  public static final DualEncoderConfig DEFAULT =
      new DualEncoderConfig(FeatureConfig.DEFAULT, 64, 256, 128, true, 20f);

  /** A bag-of-features tower (the default kind). */
  public DualEncoderConfig(
      FeatureConfig features,
      int embeddingDim,
      int hiddenDim,
      int outputDim,
      boolean sharedTowers,
      float scoreScale) {
    this(features, embeddingDim, hiddenDim, outputDim, sharedTowers, scoreScale, TowerKind.BAG, 32);
  }

  public DualEncoderConfig {
    towerKind =
        towerKind == null ? TowerKind.BAG : towerKind; // snapshots written before the field existed
    maxTokens = maxTokens == 0 ? 32 : maxTokens;
    positive("maxTokens", maxTokens);
    if (features == null) {
      throw new IllegalArgumentException("features config is missing");
    }
    positive("embeddingDim", embeddingDim);
    positive("hiddenDim", hiddenDim);
    positive("outputDim", outputDim);
    if (!(scoreScale > 0) || Float.isInfinite(scoreScale)) {
      throw new IllegalArgumentException(
          "scoreScale (beta) must be a positive finite number, got " + scoreScale);
    }
  }

  public DualEncoderConfig withSharedTowers(boolean shared) {
    return new DualEncoderConfig(
        features, embeddingDim, hiddenDim, outputDim, shared, scoreScale, towerKind, maxTokens);
  }

  public DualEncoderConfig withFeatures(FeatureConfig newFeatures) {
    return new DualEncoderConfig(
        newFeatures,
        embeddingDim,
        hiddenDim,
        outputDim,
        sharedTowers,
        scoreScale,
        towerKind,
        maxTokens);
  }

  public DualEncoderConfig withDims(int embedding, int hidden, int output) {
    return new DualEncoderConfig(
        features, embedding, hidden, output, sharedTowers, scoreScale, towerKind, maxTokens);
  }

  /** The same shape with another kind of tower; {@code tokens} bounds a transformer's input set. */
  public DualEncoderConfig withTower(TowerKind kind, int tokens) {
    return new DualEncoderConfig(
        features, embeddingDim, hiddenDim, outputDim, sharedTowers, scoreScale, kind, tokens);
  }

  private static void positive(String name, int value) {
    if (value < 1) {
      throw new IllegalArgumentException(name + " must be at least 1, got " + value);
    }
  }
}
