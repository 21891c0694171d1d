package io.dynnibal.gpukit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.transformer.BertCheckpoint;
import io.dynnibal.model.transformer.HuggingFaceExport;
import io.dynnibal.model.transformer.Safetensors;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class VocabularySubsetTest {
  private static final List<String> TEXTS =
      List.of(
          "GNU C compiler and development tools",
          "lightweight window manager for X11, tiling",
          "Python 3 bindings to libtorch: tensors & autograd");

  @TempDir Path dir;

  @Test
  void theCutCheckpointKeepsOnlyTheTextsPiecesAndTheSpecialTokens() {
    BertCheckpoint full = BertCheckpoint.load(BertCheckpoint.MINILM);
    BertCheckpoint cut = VocabularySubset.of(full, TEXTS);
    List<String> tokens = cut.tokenizer().tokensById();
    assertEquals(cut.shape().vocabulary(), tokens.size());
    assertTrue(tokens.containsAll(List.of("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")));
    assertTrue(tokens.size() < 60, tokens.toString());
    assertEquals("[PAD]", tokens.get(0)); // the ids keep their order: padding stays 0
    int hidden = full.shape().hidden();
    List<String> fullTokens = full.tokenizer().tokensById();
    float[] fullRows = full.weight("embeddings.word_embeddings.weight").values();
    float[] cutRows = cut.weight("embeddings.word_embeddings.weight").values();
    for (int id = 0; id < tokens.size(); id++) {
      int old = fullTokens.indexOf(tokens.get(id));
      for (int c = 0; c < hidden; c++) {
        assertEquals(fullRows[old * hidden + c], cutRows[id * hidden + c]);
      }
    }
  }

  /** The same network on the texts: every embedding is the full checkpoint's. */
  @Test
  void theCutCheckpointEncodesTheTextsAsTheFullOne() throws Exception {
    BertCheckpoint cut = VocabularySubset.of(BertCheckpoint.load(BertCheckpoint.MINILM), TEXTS);
    Path model = dir.resolve("model");
    HuggingFaceExport.write(
        model, cut.weights(), cut.shape(), cut.tokenizer(), 32, Safetensors.Precision.F32);
    float[][] full = encode(BertCheckpoint.MINILM);
    float[][] small = encode(model.toString());
    for (int i = 0; i < TEXTS.size(); i++) {
      assertArrayEquals(full[i], small[i], 1e-6f, TEXTS.get(i));
    }
  }

  private static float[][] encode(String checkpoint) {
    DualEncoderConfig config = DualEncoderConfig.transformer(checkpoint, 0, 32, 0, 0, true, 20f);
    try (DualEncoder encoder = DualEncoder.create(config, 7, Device.cpu())) {
      return encoder.encodeTargetTexts(TEXTS);
    }
  }
}
