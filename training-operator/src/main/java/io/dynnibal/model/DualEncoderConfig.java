package io.dynnibal.model;

import io.dynnibal.model.features.FeatureConfig;
import io.dynnibal.model.transformer.BertCheckpoint;
import io.dynnibal.model.transformer.BertShape;
import io.dynnibal.model.transformer.FastPath;
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
 * <p>{@link TowerKind#TRANSFORMER} is a pretrained BERT-family encoder read from {@code
 * checkpoint}: a target becomes at most {@code maxTokens} WordPiece tokens and a query at most
 * {@code queryMaxTokens}, the embedding table holds the checkpoint's word embeddings ({@code
 * features.buckets} = its vocabulary, {@code embeddingDim} = its width), and the output is the
 * masked mean of the last layer, projected to {@code outputDim} when that differs from the width.
 * {@code hiddenDim} is not used.
 *
 * @param sharedTowers one tower for queries and targets (the default: both sides are short English
 *     with package names, and one vocabulary learns faster from scratch) or one tower per side
 * @param scoreScale the paper's beta (inverse temperature), 20 by default
 * @param checkpoint the transformer's weights: {@link BertCheckpoint#MINILM} (the default) or a
 *     Hugging Face directory; null for the other kinds
 * @param bert the transformer's shape, read from the checkpoint when null; null for the other kinds
 * @param queryMaxTokens a transformer's tokens per query (0: {@code maxTokens}); {@code maxTokens}
 *     for the other kinds, whose towers read queries and targets alike
 * @param trainableLayers a transformer's layers that fine-tune, counted from the top, with the
 *     projection; the others and the embeddings stay as the checkpoint has them (0: every layer and
 *     the embeddings). Freezing the bottom of the encoder saves its backward pass and keeps the
 *     target space closer to where the cache was built. 0 for the other kinds.
 * @param fastPath how a transformer saves work without changing what it computes (a cache of its
 *     frozen layers' output, length groups); {@link FastPath#OFF} for the other kinds
 */
public record DualEncoderConfig(
    FeatureConfig features,
    int embeddingDim,
    int hiddenDim,
    int outputDim,
    boolean sharedTowers,
    float scoreScale,
    TowerKind towerKind,
    int maxTokens,
    String checkpoint,
    BertShape bert,
    int queryMaxTokens,
    int trainableLayers,
    FastPath fastPath)
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

  /**
   * A tower of {@code towerKind}; a transformer reads its checkpoint's shape (the bundled MiniLM)
   * and replaces the features and embedding width by the checkpoint's.
   */
  public DualEncoderConfig(
      FeatureConfig features,
      int embeddingDim,
      int hiddenDim,
      int outputDim,
      boolean sharedTowers,
      float scoreScale,
      TowerKind towerKind,
      int maxTokens) {
    this(
        features,
        embeddingDim,
        hiddenDim,
        outputDim,
        sharedTowers,
        scoreScale,
        towerKind,
        maxTokens,
        null,
        null,
        0,
        0,
        FastPath.OFF);
  }

  /**
   * A transformer tower from {@code checkpoint} reading {@code maxTokens} tokens per target and
   * {@code queryMaxTokens} per query (0: as many), fine-tuning its top {@code trainableLayers} (0:
   * all), with output width {@code outputDim} (0 or the checkpoint's width: no projection).
   */
  public static DualEncoderConfig transformer(
      String checkpoint,
      int outputDim,
      int maxTokens,
      int queryMaxTokens,
      int trainableLayers,
      boolean sharedTowers,
      float scoreScale) {
    if (outputDim == 0) {
      outputDim =
          BertCheckpoint.load(checkpoint == null ? BertCheckpoint.MINILM : checkpoint)
              .shape()
              .hidden();
    }
    return new DualEncoderConfig(
        FeatureConfig.DEFAULT,
        1,
        1,
        outputDim,
        sharedTowers,
        scoreScale,
        TowerKind.TRANSFORMER,
        maxTokens,
        checkpoint,
        null,
        queryMaxTokens,
        trainableLayers,
        FastPath.OFF);
  }

  /** The same encoder run by {@code path} (a transformer's; ignored by the other kinds). */
  public DualEncoderConfig withFastPath(FastPath path) {
    return new DualEncoderConfig(
        features,
        embeddingDim,
        hiddenDim,
        outputDim,
        sharedTowers,
        scoreScale,
        towerKind,
        maxTokens,
        checkpoint,
        bert,
        queryMaxTokens,
        trainableLayers,
        path);
  }

  public DualEncoderConfig {
    towerKind =
        towerKind == null ? TowerKind.BAG : towerKind; // snapshots written before the field existed
    maxTokens = maxTokens == 0 ? 32 : maxTokens;
    positive("maxTokens", maxTokens);
    if (towerKind == TowerKind.TRANSFORMER) {
      checkpoint = checkpoint == null || checkpoint.isBlank() ? BertCheckpoint.MINILM : checkpoint;
      if (bert == null) {
        bert = BertCheckpoint.load(checkpoint).shape();
      }
      queryMaxTokens = queryMaxTokens == 0 ? maxTokens : queryMaxTokens;
      tokensInRange("maxTokens", maxTokens, bert);
      tokensInRange("queryMaxTokens", queryMaxTokens, bert);
      if (trainableLayers < 0 || trainableLayers > bert.layers()) {
        throw new IllegalArgumentException(
            "trainableLayers counts the top layers that fine-tune: 1 to "
                + bert.layers()
                + ", or 0 for all with the embeddings; got "
                + trainableLayers);
      }
      features = new FeatureConfig(bert.vocabulary(), maxTokens, 0, 1, 1);
      embeddingDim = bert.hidden();
    } else {
      checkpoint = null;
      bert = null;
      queryMaxTokens = maxTokens;
      trainableLayers = 0;
      fastPath = FastPath.OFF;
    }
    fastPath = fastPath == null ? FastPath.OFF : fastPath; // snapshots written before the field
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
        features,
        embeddingDim,
        hiddenDim,
        outputDim,
        shared,
        scoreScale,
        towerKind,
        maxTokens,
        checkpoint,
        bert,
        queryMaxTokens,
        trainableLayers,
        fastPath);
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
        maxTokens,
        checkpoint,
        bert,
        queryMaxTokens,
        trainableLayers,
        fastPath);
  }

  public DualEncoderConfig withDims(int embedding, int hidden, int output) {
    return new DualEncoderConfig(
        features,
        embedding,
        hidden,
        output,
        sharedTowers,
        scoreScale,
        towerKind,
        maxTokens,
        checkpoint,
        bert,
        queryMaxTokens,
        trainableLayers,
        fastPath);
  }

  /** The same shape with another kind of tower; {@code tokens} bounds a transformer's input set. */
  public DualEncoderConfig withTower(TowerKind kind, int tokens) {
    return new DualEncoderConfig(
        features,
        embeddingDim,
        hiddenDim,
        outputDim,
        sharedTowers,
        scoreScale,
        kind,
        tokens,
        checkpoint,
        null,
        0,
        trainableLayers,
        fastPath);
  }

  private static void tokensInRange(String name, int tokens, BertShape bert) {
    if (tokens < 3 || tokens > bert.maxPositions()) {
      throw new IllegalArgumentException(
          "a transformer reads 3 to "
              + bert.maxPositions()
              + " tokens (its position embeddings), got "
              + name
              + " "
              + tokens);
    }
  }

  private static void positive(String name, int value) {
    if (value < 1) {
      throw new IllegalArgumentException(name + " must be at least 1, got " + value);
    }
  }
}
