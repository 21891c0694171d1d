package io.dynnibal.model.transformer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.model.AdamSettings;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.Features;
import io.dynnibal.training.DualEncoderTrainer;
import io.dynnibal.training.LearningRateSchedule;
import io.dynnibal.training.StepResult;
import io.dynnibal.training.TrainerConfig;
import io.dynnibal.training.TrainingBatch;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The transformer tower as the trainer sees it: tokens, truncation, real gradients. */
class TransformerTowerTest {
  private static final DualEncoderConfig MINILM_16 =
      DualEncoderConfig.transformer(BertCheckpoint.MINILM, 384, 16, 0, 0, true, 20f);

  @Test
  void textsBecomeTokensInOrderCutToMaxTokens() {
    try (DualEncoder encoder = DualEncoder.create(MINILM_16, 1)) {
      Features f = encoder.featurizeTarget("the cat sat on the mat " + "again ".repeat(40));
      assertEquals(16, f.size());
      assertEquals(101, f.ids()[0]); // [CLS]
      assertEquals(102, f.ids()[15]); // [SEP] survives the cut
      assertEquals(f.ids()[1], f.ids()[5]); // "the" twice: a sequence, not a bag
      assertEquals(30522, encoder.config().features().buckets());
      assertEquals(384, encoder.config().embeddingDim());
    }
  }

  @Test
  void fineTuningLowersTheLossOfItsBatchAndMovesOnlyTheTokensItSaw() {
    List<String> queries =
        List.of("a strategy game", "a perl module for timers", "the c library", "a text editor");
    List<String> targets =
        List.of(
            "0ad: real-time strategy game of ancient warfare",
            "libmoosex-role-timer-perl: measure time spent in methods of Moose roles",
            "libc6: GNU C Library, shared libraries",
            "vim: Vi IMproved, enhanced vi editor");
    try (DualEncoder encoder = DualEncoder.create(MINILM_16, 2)) {
      DualEncoderTrainer trainer = fineTuner(encoder, 12);
      // Negatives that look alike: the loss must separate the pairs, not just recognise words.
      List<Features> q = queries.stream().map(encoder::featurizeQuery).toList();
      List<Features> t = encoder.featurizeTargets(targets);
      List<String> ids = List.of("0ad", "moosex", "libc6", "vim");
      TrainingBatch batch = new TrainingBatch(q, ids, t, List.of(), List.of());
      int unseen = encoder.featurizeTarget("zebra").ids()[1];
      float[] before = row(encoder, unseen);
      List<StepResult> steps = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        steps.add(trainer.step(batch));
      }
      float first = steps.get(0).loss();
      float last = steps.get(steps.size() - 1).loss();
      assertTrue(last < first / 2, "loss " + first + " -> " + last);
      assertTrue(java.util.Arrays.equals(before, row(encoder, unseen)), "an unseen token moved");
    }
  }

  @Test
  void frozenLayersAndEmbeddingsStayAsTheCheckpointHasThem() {
    DualEncoderConfig topTwo =
        DualEncoderConfig.transformer(BertCheckpoint.MINILM, 384, 16, 0, 2, true, 20f);
    try (DualEncoder encoder = DualEncoder.create(topTwo, 3)) {
      DualEncoderTrainer trainer = fineTuner(encoder, 4);
      var tower = encoder.queryTower();
      var all = tower.parameters();
      var trainable = tower.trainableParameters();
      // Layers 4 and 5 of 6, each with 16 arrays (6 linear weights and biases, 2 layer norms).
      assertEquals(32, trainable.size());
      List<float[]> before = new ArrayList<>();
      for (var p : all) {
        before.add(p.getArray().toFloatArray());
      }
      float[] table = tower.table().values().clone();
      List<Features> q =
          List.of(encoder.featurizeQuery("a strategy game"), encoder.featurizeQuery("an editor"));
      List<Features> t =
          encoder.featurizeTargets(List.of("0ad: strategy game", "vim: Vi IMproved editor"));
      trainer.step(new TrainingBatch(q, List.of("0ad", "vim"), t, List.of(), List.of()));
      for (int i = 0; i < all.size(); i++) {
        boolean moved =
            !java.util.Arrays.equals(before.get(i), all.get(i).getArray().toFloatArray());
        boolean trains = trainable.contains(all.get(i));
        assertEquals(trains, moved, all.get(i).getName() + (trains ? " did not move" : " moved"));
      }
      assertTrue(java.util.Arrays.equals(table, tower.table().values()), "the embeddings moved");
      assertEquals(2 * trainable.size(), trainer.networkMoments().get(0).size());
    }
  }

  @Test
  void queriesAndTargetsHaveTheirOwnLengths() {
    DualEncoderConfig config =
        DualEncoderConfig.transformer(BertCheckpoint.MINILM, 384, 24, 8, 0, true, 20f);
    try (DualEncoder encoder = DualEncoder.create(config, 1)) {
      String text = "word ".repeat(50);
      assertEquals(8, encoder.featurizeQuery(text).size());
      assertEquals(24, encoder.featurizeTarget(text).size());
      assertEquals(1, encoder.encodeQueryTexts(List.of(text)).length);
    }
    assertThrows(
        IllegalArgumentException.class,
        () -> DualEncoderConfig.transformer(BertCheckpoint.MINILM, 384, 16, 0, 7, true, 20f));
  }

  @Test
  void encodingManyTextsOnTwoThreadsGivesEachTextItsOwnEmbedding() {
    DualEncoderConfig config =
        DualEncoderConfig.transformer(BertCheckpoint.MINILM, 384, 24, 0, 0, true, 20f);
    try (DualEncoder encoder = DualEncoder.create(config, 1)) {
      java.util.Random random = new java.util.Random(5);
      List<String> texts = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        texts.add("word" + i + " " + "more words ".repeat(random.nextInt(12)));
      }
      List<Features> features = encoder.featurizeTargets(texts);
      // Chunks are formed in order of length, so each text meets other neighbours than alone.
      float[][] together = encoder.encodeTargets(features, 2);
      assertEquals(100, together.length);
      for (int i = 0; i < texts.size(); i += 9) {
        float[] alone = encoder.encodeTargets(List.of(features.get(i)))[0];
        for (int d = 0; d < alone.length; d++) {
          assertEquals(alone[d], together[i][d], 1e-4, "text " + i + " dimension " + d);
        }
      }
      assertTrue(java.util.Arrays.deepEquals(together, encoder.encodeTargets(features, 1)));
      assertTrue(!encoder.initialisationUsesSeed(), "no projection: the checkpoint is all");
    }
  }

  /** Fine-tuning at 1e-4 for {@code steps} steps, the table at the network's rate. */
  private static DualEncoderTrainer fineTuner(DualEncoder encoder, int steps) {
    return new DualEncoderTrainer(
        encoder,
        new TrainerConfig(
            new LearningRateSchedule(1e-4f, 1, steps, 1f, 1f),
            1f,
            AdamSettings.DEFAULT,
            TrainerConfig.DEFAULT_CLIP_NORM));
  }

  private static float[] row(DualEncoder encoder, int token) {
    float[] values = encoder.queryTower().table().values();
    return java.util.Arrays.copyOfRange(values, token * 384, token * 384 + 384);
  }

  @Test
  void aCheckpointThatIsNotThereIsOneClearError() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> DualEncoderConfig.transformer("/no/such/model", 384, 16, 0, 0, true, 20f));
    assertTrue(e.getMessage().contains("/no/such/model"), e.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> DualEncoderConfig.transformer(BertCheckpoint.MINILM, 384, 1000, 0, 0, true, 20f));
  }
}
