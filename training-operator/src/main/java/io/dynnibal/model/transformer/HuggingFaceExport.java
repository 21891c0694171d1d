package io.dynnibal.model.transformer;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Writes a transformer tower as a Hugging Face / sentence-transformers model directory, the layout
 * those libraries load with one line ({@code SentenceTransformer(dir)}, {@code
 * AutoModel.from_pretrained(dir)}):
 *
 * <pre>
 * config.json, model.safetensors    the BERT encoder (BertModel, float32; one token type)
 * vocab.txt, tokenizer_config.json  its WordPiece tokenizer
 * modules.json, sentence_bert_config.json, 1_Pooling/config.json   mean pooling over real tokens
 * 2_Dense/                          the projection, when the output is narrower than the encoder
 * 3_Normalize/ (or 2_Normalize/)    unit length, as the tower's output
 * </pre>
 *
 * {@link BertCheckpoint#load} reads the directory back, the projection included.
 */
public final class HuggingFaceExport {
  /** The Dense module's folder. */
  static final String DENSE = "2_Dense";

  private static final ObjectMapper JSON = new ObjectMapper();

  private HuggingFaceExport() {}

  /**
   * @param words the word embeddings (vocabulary x H, row-major), the tower's table
   * @param maxTokens the tokens per text the tower reads ({@code max_seq_length})
   */
  public static void write(
      Path dir,
      BertEncoderBlock block,
      BertShape shape,
      float[] words,
      WordPieceTokenizer tokenizer,
      int maxTokens)
      throws IOException {
    Map<String, BertCheckpoint.Tensor> weights = new LinkedHashMap<>();
    weights.put(
        "embeddings.word_embeddings.weight",
        new BertCheckpoint.Tensor(new long[] {shape.vocabulary(), shape.hidden()}, words));
    weights.putAll(block.weights());
    write(dir, weights, shape, tokenizer, maxTokens, Safetensors.Precision.F32);
  }

  /**
   * Writes a checkpoint's weights (the names {@link BertCheckpoint} gives them, the projection's
   * among them when there is one) in {@code precision}.
   */
  public static void write(
      Path dir,
      Map<String, BertCheckpoint.Tensor> checkpointWeights,
      BertShape shape,
      WordPieceTokenizer tokenizer,
      int maxTokens,
      Safetensors.Precision precision)
      throws IOException {
    Files.createDirectories(dir);
    Map<String, BertCheckpoint.Tensor> weights = new LinkedHashMap<>();
    BertCheckpoint.Tensor projectionWeight = null;
    BertCheckpoint.Tensor projectionBias = null;
    for (Map.Entry<String, BertCheckpoint.Tensor> e : checkpointWeights.entrySet()) {
      if (e.getKey().equals(BertEncoderBlock.PROJECTION + ".weight")) {
        projectionWeight = e.getValue();
      } else if (e.getKey().equals(BertEncoderBlock.PROJECTION + ".bias")) {
        projectionBias = e.getValue();
      } else {
        weights.put(e.getKey(), e.getValue());
      }
    }
    Safetensors.write(dir.resolve("model.safetensors"), weights, precision);
    writeJson(dir.resolve("config.json"), config(shape, precision));
    Files.write(dir.resolve("vocab.txt"), tokenizer.tokensById(), StandardCharsets.UTF_8);
    ObjectNode tokenizerConfig = JSON.createObjectNode();
    tokenizerConfig.put("tokenizer_class", "BertTokenizer");
    tokenizerConfig.put("do_lower_case", tokenizer.lowerCase());
    tokenizerConfig.put("model_max_length", maxTokens);
    writeJson(dir.resolve("tokenizer_config.json"), tokenizerConfig);
    ObjectNode sentenceConfig = JSON.createObjectNode();
    sentenceConfig.put("max_seq_length", maxTokens);
    sentenceConfig.put("do_lower_case", false);
    writeJson(dir.resolve("sentence_bert_config.json"), sentenceConfig);

    ArrayNode modules = JSON.createArrayNode();
    module(modules, "", "Transformer");
    module(modules, "1_Pooling", "Pooling");
    Files.createDirectories(dir.resolve("1_Pooling"));
    ObjectNode pooling = JSON.createObjectNode();
    pooling.put("word_embedding_dimension", shape.hidden());
    pooling.put("pooling_mode_cls_token", false);
    pooling.put("pooling_mode_mean_tokens", true);
    pooling.put("pooling_mode_max_tokens", false);
    pooling.put("pooling_mode_mean_sqrt_len_tokens", false);
    writeJson(dir.resolve("1_Pooling").resolve("config.json"), pooling);
    String normalize = "2_Normalize";
    if (projectionWeight != null) {
      module(modules, DENSE, "Dense");
      Path dense = Files.createDirectories(dir.resolve(DENSE));
      ObjectNode denseConfig = JSON.createObjectNode();
      denseConfig.put("in_features", shape.hidden());
      denseConfig.put("out_features", projectionWeight.shape()[0]);
      denseConfig.put("bias", true);
      denseConfig.put("activation_function", "torch.nn.modules.linear.Identity");
      writeJson(dense.resolve("config.json"), denseConfig);
      Map<String, BertCheckpoint.Tensor> linear = new LinkedHashMap<>();
      linear.put("linear.weight", projectionWeight);
      linear.put("linear.bias", projectionBias);
      Safetensors.write(dense.resolve("model.safetensors"), linear, precision);
      normalize = "3_Normalize";
    }
    module(modules, normalize, "Normalize");
    Files.createDirectories(dir.resolve(normalize));
    writeJson(dir.resolve("modules.json"), modules);
  }

  private static ObjectNode config(BertShape shape, Safetensors.Precision precision) {
    ObjectNode c = JSON.createObjectNode();
    c.putArray("architectures").add("BertModel");
    c.put("model_type", "bert");
    c.put("vocab_size", shape.vocabulary());
    c.put("hidden_size", shape.hidden());
    c.put("num_hidden_layers", shape.layers());
    c.put("num_attention_heads", shape.heads());
    c.put("intermediate_size", shape.intermediate());
    c.put("hidden_act", "gelu");
    c.put("max_position_embeddings", shape.maxPositions());
    c.put("type_vocab_size", 1);
    c.put("layer_norm_eps", shape.layerNormEpsilon());
    c.put("hidden_dropout_prob", 0.1);
    c.put("attention_probs_dropout_prob", 0.1);
    c.put("pad_token_id", 0);
    c.put("position_embedding_type", "absolute");
    c.put("torch_dtype", precision == Safetensors.Precision.F16 ? "float16" : "float32");
    return c;
  }

  private static void module(ArrayNode modules, String path, String type) {
    ObjectNode m = modules.addObject();
    m.put("idx", modules.size() - 1);
    m.put("name", String.valueOf(modules.size() - 1));
    m.put("path", path);
    m.put("type", "sentence_transformers.models." + type);
  }

  private static void writeJson(Path file, Object node) throws IOException {
    Files.writeString(file, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(node) + "\n");
  }
}
