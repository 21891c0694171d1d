package io.dynnibal.jobs.config;

import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.TowerKind;
import io.dynnibal.model.features.FeatureConfig;
import io.dynnibal.model.transformer.BertCheckpoint;
import io.dynnibal.model.transformer.BertShape;
import io.dynnibal.model.transformer.FastPath;
import io.dynnibal.settings.Setting;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.List;

/** The model settings group: the dual encoder's tower, its sizes and the softmax's scale. */
public final class ModelSettings implements Serializable {
  private static final long serialVersionUID = 1L;

  @Setting(value = "score scale beta (inverse temperature)", min = 0, aboveMin = true)
  public float scoreScale = 20f;

  @Setting(value = "hash buckets of the features", min = 16)
  public int modelBuckets = FeatureConfig.DEFAULT.buckets();

  @Setting(value = "embedding table width", min = 1)
  public int modelEmbeddingDim = DualEncoderConfig.DEFAULT.embeddingDim();

  @Setting(value = "hidden layer width", min = 1)
  public int modelHiddenDim = DualEncoderConfig.DEFAULT.hiddenDim();

  @Setting(value = "embedding size d", min = 1)
  public int modelOutputDim = DualEncoderConfig.DEFAULT.outputDim();

  @Setting("tower kind: bag, set-transformer or transformer (a pretrained BERT-family encoder)")
  public String modelTower = TowerKind.BAG.id;

  @Setting(
      value =
          "features a set-transformer reads, or a transformer's tokens per text ([CLS] and [SEP]"
              + " included)",
      min = 1)
  public int modelMaxTokens = DualEncoderConfig.DEFAULT.maxTokens();

  @Setting(
      "a transformer tower's weights: all-minilm-l6-v2 (bundled) or a Hugging Face directory"
          + " (config.json, model.safetensors, tokenizer.json or vocab.txt)")
  public String modelCheckpoint = BertCheckpoint.MINILM;

  @Setting(
      value = "a transformer's tokens per query, [CLS] and [SEP] included (0: model.max.tokens)",
      min = 0)
  public int modelQueryMaxTokens = 0;

  @Setting(
      value =
          "a transformer's top layers that fine-tune, with the projection; the others and the"
              + " embeddings stay as the checkpoint has them (0: all layers and the embeddings)",
      min = 0)
  public int modelTrainableLayers = 0;

  @Setting(
      value =
          "a transformer with frozen layers: MiB of their output per text kept in memory-mapped"
              + " files, shared by the job's operators in one JVM, so a text seen again runs only"
              + " the trainable layers (0: no cache)",
      min = 0)
  public int modelFrozenCacheMb = 0;

  @Setting("the frozen-layer cache in half precision (2 bytes a value), else single (4)")
  public boolean modelFrozenCacheHalf = true;

  @Setting(
      value =
          "a transformer's training step runs each side's texts in this many groups of similar"
              + " length, each padded to its own longest",
      min = 1)
  public int modelLengthBuckets = 1;

  /** The dual encoder these settings describe. */
  public DualEncoderConfig encoderConfig() {
    FeatureConfig f = FeatureConfig.DEFAULT;
    FeatureConfig features =
        new FeatureConfig(
            modelBuckets, f.maxWords(), f.charNgramWords(), f.minCharN(), f.maxCharN());
    return new DualEncoderConfig(
        features,
        modelEmbeddingDim,
        modelHiddenDim,
        modelOutputDim,
        true,
        scoreScale,
        TowerKind.of(modelTower),
        modelMaxTokens,
        modelCheckpoint,
        null,
        modelQueryMaxTokens,
        modelTrainableLayers,
        new FastPath(modelFrozenCacheMb, modelFrozenCacheHalf, modelLengthBuckets));
  }

  /** What is wrong with the tower's settings, in the settings' names, added to {@code p}. */
  void problems(List<String> p) {
    if (!TowerKind.NAMES.contains(modelTower)) {
      p.add("model.tower must be one of " + TowerKind.NAMES + ", got " + modelTower);
    } else if (TowerKind.of(modelTower) == TowerKind.TRANSFORMER) {
      checkpointProblems(p);
    }
  }

  /** What the transformer checkpoint's shape allows. */
  private void checkpointProblems(List<String> p) {
    BertShape shape;
    try {
      shape = BertCheckpoint.load(modelCheckpoint).shape();
    } catch (IllegalArgumentException | UncheckedIOException e) {
      p.add("model.checkpoint: " + e.getMessage());
      return;
    }
    int positions = shape.maxPositions();
    if (modelMaxTokens < 3 || modelMaxTokens > positions) {
      p.add(
          "model.max.tokens must be 3 to "
              + positions
              + " for this checkpoint, got "
              + modelMaxTokens);
    }
    if (modelQueryMaxTokens != 0 && (modelQueryMaxTokens < 3 || modelQueryMaxTokens > positions)) {
      p.add(
          "model.query.max.tokens must be 0 (model.max.tokens) or 3 to "
              + positions
              + ", got "
              + modelQueryMaxTokens);
    }
    if (modelTrainableLayers > shape.layers()) {
      p.add(
          "model.trainable.layers must be 0 (all) to "
              + shape.layers()
              + " (the checkpoint's layers), got "
              + modelTrainableLayers);
    }
  }
}
