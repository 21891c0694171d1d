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
      DualEncoderConfig.transformer(BertCheckpoint.MINILM, 384, 16, true, 20f);

  @Test
  void textsBecomeTokensInOrderCutToMaxTokens() {
    try (DualEncoder encoder = DualEncoder.create(MINILM_16, 1)) {
      Features f = encoder.featurize("the cat sat on the mat " + "again ".repeat(40));
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
      DualEncoderTrainer trainer =
          new DualEncoderTrainer(
              encoder,
              new TrainerConfig(
                  new LearningRateSchedule(1e-4f, 1, 12, 1f, 1f),
                  1f,
                  AdamSettings.DEFAULT,
                  TrainerConfig.DEFAULT_CLIP_NORM));
      // Negatives that look alike: the loss must separate the pairs, not just recognise words.
      List<Features> q = encoder.featurizeAll(queries);
      List<Features> t = encoder.featurizeAll(targets);
      List<String> ids = List.of("0ad", "moosex", "libc6", "vim");
      TrainingBatch batch = new TrainingBatch(q, ids, t, List.of(), List.of());
      int unseen = encoder.featurize("zebra").ids()[1];
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

  private static float[] row(DualEncoder encoder, int token) {
    float[] values = encoder.queryTower().table().values();
    return java.util.Arrays.copyOfRange(values, token * 384, token * 384 + 384);
  }

  @Test
  void aCheckpointThatIsNotThereIsOneClearError() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> DualEncoderConfig.transformer("/no/such/model", 384, 16, true, 20f));
    assertTrue(e.getMessage().contains("/no/such/model"), e.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> DualEncoderConfig.transformer(BertCheckpoint.MINILM, 384, 1000, true, 20f));
  }
}
