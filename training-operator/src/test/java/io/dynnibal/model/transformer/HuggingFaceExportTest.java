package io.dynnibal.model.transformer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.Features;
import io.dynnibal.training.DualEncoderTrainer;
import io.dynnibal.training.LearningRateSchedule;
import io.dynnibal.training.TrainerConfig;
import io.dynnibal.training.TrainingBatch;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A fine-tuned transformer written as a Hugging Face directory reads back as the same encoder. */
class HuggingFaceExportTest {
  private static final List<String> TEXTS =
      List.of("vim: Vi IMproved, enhanced vi editor", "a strategy game", "libc6: GNU C Library");

  @TempDir Path dir;

  @Test
  void aFineTunedEncoderRoundTripsWithItsEmbeddings() throws Exception {
    roundTrip(DualEncoderConfig.transformer(BertCheckpoint.MINILM, 0, 16, 8, 0, true, 20f));
  }

  @Test
  void aProjectionTravelsAsASentenceTransformersDenseModule() throws Exception {
    roundTrip(DualEncoderConfig.transformer(BertCheckpoint.MINILM, 32, 16, 8, 1, true, 20f));
    assertTrue(Files.isRegularFile(dir.resolve("2_Dense").resolve("model.safetensors")));
    assertTrue(Files.readString(dir.resolve("modules.json")).contains("3_Normalize"));
  }

  private void roundTrip(DualEncoderConfig config) throws Exception {
    try (DualEncoder tuned = DualEncoder.create(config, 9)) {
      fineTune(tuned);
      float[][] expected = tuned.encodeTargetTexts(TEXTS);
      tuned.exportHuggingFace(dir);
      for (String file :
          List.of(
              "config.json",
              "model.safetensors",
              "vocab.txt",
              "tokenizer_config.json",
              "modules.json",
              "sentence_bert_config.json",
              "1_Pooling/config.json")) {
        assertTrue(Files.isRegularFile(dir.resolve(file)), file);
      }
      DualEncoderConfig reloaded =
          DualEncoderConfig.transformer(dir.toString(), config.outputDim(), 16, 8, 0, true, 20f);
      try (DualEncoder back = DualEncoder.create(reloaded, 1)) {
        assertEquals(
            tuned.featurizeTarget(TEXTS.get(0)).size(), back.featurizeTarget(TEXTS.get(0)).size());
        float[][] actual = back.encodeTargetTexts(TEXTS);
        for (int i = 0; i < TEXTS.size(); i++) {
          assertArrayEquals(expected[i], actual[i], 1e-5f, TEXTS.get(i));
        }
      }
    }
  }

  /** Three steps, so the export is not the checkpoint it started from. */
  private static void fineTune(DualEncoder encoder) {
    DualEncoderTrainer trainer =
        new DualEncoderTrainer(
            encoder,
            new TrainerConfig(
                new LearningRateSchedule(1e-3f, 1, 0, 0.05f, 1f),
                1f,
                io.dynnibal.model.AdamSettings.DEFAULT,
                1f));
    List<Features> q = List.of(encoder.featurizeQuery("an editor"), encoder.featurizeQuery("game"));
    List<Features> t = encoder.featurizeTargets(TEXTS.subList(0, 2));
    for (int s = 0; s < 3; s++) {
      trainer.step(new TrainingBatch(q, List.of("vim", "game"), t, List.of(), List.of()));
    }
  }
}
