package io.dynnibal.model.transformer;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The size of a BERT-family encoder.
 *
 * @param heads attention heads (not visible in the weights: from the checkpoint's config)
 * @param layerNormEpsilon the epsilon of every layer norm
 */
public record BertShape(
    int vocabulary,
    int hidden,
    int layers,
    int heads,
    int intermediate,
    int maxPositions,
    float layerNormEpsilon)
    implements java.io.Serializable {

  public BertShape {
    if (heads < 1 || hidden % heads != 0) {
      throw new IllegalArgumentException(heads + " heads do not divide the width " + hidden);
    }
  }

  /** The shape the weights have; {@code heads} and the epsilon come from the config. */
  static BertShape infer(Map<String, BertCheckpoint.Tensor> weights, int heads, float epsilon) {
    BertCheckpoint.Tensor words = weights.get("embeddings.word_embeddings.weight");
    BertCheckpoint.Tensor positions = weights.get("embeddings.position_embeddings.weight");
    BertCheckpoint.Tensor intermediate = weights.get("encoder.layer.0.intermediate.dense.weight");
    if (words == null || positions == null || intermediate == null) {
      throw new IllegalArgumentException(
          "not a BERT encoder checkpoint: embeddings or encoder.layer.0 weights are missing");
    }
    int layers = 0;
    while (weights.containsKey("encoder.layer." + layers + ".output.dense.weight")) {
      layers++;
    }
    return new BertShape(
        (int) words.shape()[0],
        (int) words.shape()[1],
        layers,
        heads,
        (int) intermediate.shape()[0],
        (int) positions.shape()[0],
        epsilon);
  }

  /** The Hugging Face names of every weight the encoder needs. */
  List<String> requiredWeights() {
    List<String> names = new ArrayList<>();
    names.add("embeddings.word_embeddings.weight");
    names.add("embeddings.position_embeddings.weight");
    names.add("embeddings.token_type_embeddings.weight");
    names.add("embeddings.LayerNorm.weight");
    names.add("embeddings.LayerNorm.bias");
    for (int l = 0; l < layers; l++) {
      for (String part : LAYER_PARTS) {
        names.add("encoder.layer." + l + "." + part);
      }
    }
    return names;
  }

  static final List<String> LAYER_PARTS =
      List.of(
          "attention.self.query.weight",
          "attention.self.query.bias",
          "attention.self.key.weight",
          "attention.self.key.bias",
          "attention.self.value.weight",
          "attention.self.value.bias",
          "attention.output.dense.weight",
          "attention.output.dense.bias",
          "attention.output.LayerNorm.weight",
          "attention.output.LayerNorm.bias",
          "intermediate.dense.weight",
          "intermediate.dense.bias",
          "output.dense.weight",
          "output.dense.bias",
          "output.LayerNorm.weight",
          "output.LayerNorm.bias");
}
