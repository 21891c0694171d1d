package io.dynnibal.model.transformer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Our DJL transformer tower with the bundled all-MiniLM-L6-v2 weights against the references: the
 * Hugging Face tokenizer's ids and ONNX Runtime's sentence embeddings of the same ONNX file (masked
 * mean pooling, unit norm, as sentence-transformers does).
 */
class MiniLmParityTest {
  static final List<String> SENTENCES =
      List.of(
          "real-time strategy game of ancient warfare",
          "0ad-data-common\nReal-time strategy game of ancient warfare (common data files)",
          "Perl module for timers in MooseX roles",
          "libmoosex-role-timer-perl",
          "python3.11 minimal subset of the Python language (version 3.11)",
          "the cat sat on the mat.",
          "He ran to catch the bus, but it had already left!",
          "dog, domestic dog, Canis familiaris (noun animal): a member of the genus Canis",
          "Crème brûlée, naïve café; Ångström — über",
          "东京 is Tokyo's name in 汉字",
          "supercalifragilisticexpialidocious antidisestablishmentarianism",
          "GNU C Library: Shared libraries (glibc 2.36-9+deb12u4)",
          "emoji 😀 and symbols © ® ™ § ¶",
          "tabs\tand\nnewlines\r\nand   spaces",
          "a",
          "",
          "x".repeat(150) + " long word",
          "KDE Plasma desktop: window manager, panels and widgets for the K Desktop Environment",
          "WordNet: it is used to describe a particularly deep sleep",
          "C++ bindings for the GTK+ toolkit (gtkmm-3.0) - development files",
          "A B C D E F G H I J K L M N O P Q R S T U V W X Y Z",
          "numbers 1234567890 and 3.14159 and 1,000,000",
          "URL https://www.debian.org/doc/ and e-mail someone@example.org",
          "Nyström approximation of an SG tree over dual-encoder targets",
          "don't won't can't shouldn't y'all",
          "the quick brown fox jumps over the lazy dog ".repeat(20));

  static BertCheckpoint checkpoint;
  static DualEncoder encoder;

  @BeforeAll
  static void load() {
    checkpoint = BertCheckpoint.load(BertCheckpoint.MINILM);
    encoder =
        DualEncoder.create(
            DualEncoderConfig.transformer(BertCheckpoint.MINILM, 384, 128, 0, 0, true, 20f), 1);
  }

  @AfterAll
  static void close() {
    encoder.close();
  }

  @Test
  void shapeIsMiniLm() {
    assertTrue(
        checkpoint.shape().equals(new BertShape(30522, 384, 6, 12, 1536, 512, 1e-12f)),
        checkpoint.shape().toString());
  }

  @Test
  void tokenIdsEqualHuggingFaceTokenizers(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("tokenizer.json");
    try (InputStream in =
        getClass().getClassLoader().getResourceAsStream("all-minilm-l6-v2-tokenizer.json")) {
      Files.copy(in, json);
    }
    try (HuggingFaceTokenizer reference =
        HuggingFaceTokenizer.newInstance(json, Map.of("truncation", "false", "padding", "false"))) {
      for (String sentence : SENTENCES) {
        long[] expected = reference.encode(sentence).getIds();
        int[] ours = checkpoint.tokenizer().encode(sentence, 100_000);
        assertArrayEquals(
            expected, Arrays.stream(ours).asLongStream().toArray(), "token ids of: " + sentence);
      }
    }
  }

  @Test
  void sentenceEmbeddingsEqualOnnxRuntime() throws Exception {
    float[][] ours = encoder.encodeQueryTexts(SENTENCES);
    double minCosine = 1;
    double maxAbs = 0;
    try (InputStream in = getClass().getClassLoader().getResourceAsStream("all-minilm-l6-v2.onnx");
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        OrtSession session =
            env.createSession(in.readAllBytes(), new OrtSession.SessionOptions())) {
      for (int s = 0; s < SENTENCES.size(); s++) {
        int[] ids = checkpoint.tokenizer().encode(SENTENCES.get(s), 128);
        float[] reference = onnxSentenceEmbedding(env, session, ids);
        double dot = 0;
        for (int i = 0; i < reference.length; i++) {
          dot += reference[i] * ours[s][i];
          maxAbs = Math.max(maxAbs, Math.abs(reference[i] - ours[s][i]));
        }
        minCosine = Math.min(minCosine, dot);
      }
    }
    System.out.printf(
        "MiniLM parity over %d sentences: min cosine %.7f, max abs diff %.2e%n",
        SENTENCES.size(), minCosine, maxAbs);
    assertTrue(minCosine >= 0.9999, "min cosine " + minCosine + ", max abs diff " + maxAbs);
  }

  private static float[] onnxSentenceEmbedding(OrtEnvironment env, OrtSession session, int[] ids)
      throws Exception {
    long[][] input = {Arrays.stream(ids).asLongStream().toArray()};
    long[][] mask = {new long[ids.length]};
    Arrays.fill(mask[0], 1);
    long[][] types = {new long[ids.length]};
    try (OnnxTensor i = OnnxTensor.createTensor(env, input);
        OnnxTensor m = OnnxTensor.createTensor(env, mask);
        OnnxTensor t = OnnxTensor.createTensor(env, types);
        OrtSession.Result result =
            session.run(Map.of("input_ids", i, "attention_mask", m, "token_type_ids", t))) {
      float[][][] hidden = (float[][][]) result.get(0).getValue();
      float[] pooled = new float[hidden[0][0].length];
      for (float[] token : hidden[0]) {
        for (int d = 0; d < pooled.length; d++) {
          pooled[d] += token[d] / hidden[0].length;
        }
      }
      double norm = 0;
      for (float v : pooled) {
        norm += v * v;
      }
      for (int d = 0; d < pooled.length; d++) {
        pooled[d] /= (float) Math.sqrt(norm);
      }
      return pooled;
    }
  }
}
