package io.dynnibal.snapshot;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.FeatureConfig;
import io.dynnibal.training.DualEncoderTrainer;
import io.dynnibal.training.StepResult;
import io.dynnibal.training.SyntheticRetrievalTask;
import io.dynnibal.training.TrainerConfig;
import io.dynnibal.training.TrainingBatch;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ParameterSnapshotsTest {
  private static final DualEncoderConfig SMALL =
      new DualEncoderConfig(new FeatureConfig(1 << 12, 32, 8, 3, 4), 16, 32, 24, true, 20f);
  private final SyntheticRetrievalTask task = new SyntheticRetrievalTask(40, 80, 5, 2, 31);

  @TempDir Path dir;

  @Test
  void aRoundTripGivesIdenticalScores() {
    for (boolean shared : new boolean[] {true, false}) {
      DualEncoderConfig config = SMALL.withSharedTowers(shared);
      try (DualEncoder encoder = DualEncoder.create(config, 3)) {
        train(new DualEncoderTrainer(encoder, TrainerConfig.fromScratch(1, 10)), 5);
        URI uri = ParameterSnapshots.write(encoder, dir.resolve("shared-" + shared).toUri(), 7, 3);
        assertTrue(uri.getPath().endsWith("model-000000000007/"), uri.toString());
        try (DualEncoder loaded = ParameterSnapshots.readEncoder(uri)) {
          assertEquals(config, loaded.config());
          assertIdentical(encoder.encodeQueryTexts(queries()), loaded.encodeQueryTexts(queries()));
          assertIdentical(
              encoder.encodeTargetTexts(targets()), loaded.encodeTargetTexts(targets()));
        }
        assertFalse(ParameterSnapshots.manifest(uri).optimizerState());
      }
    }
  }

  @Test
  void aSetTransformerRoundTripsToo() {
    DualEncoderConfig config = SMALL.withTower(io.dynnibal.model.TowerKind.SET_TRANSFORMER, 8);
    try (DualEncoder encoder = DualEncoder.create(config, 8)) {
      train(new DualEncoderTrainer(encoder, TrainerConfig.fromScratch(1, 10)), 3);
      URI uri = ParameterSnapshots.write(encoder, dir.resolve("transformer").toUri(), 1, 8);
      try (DualEncoder loaded = ParameterSnapshots.readEncoder(uri)) {
        assertEquals(config, loaded.config());
        assertIdentical(encoder.encodeTargetTexts(targets()), loaded.encodeTargetTexts(targets()));
      }
    }
  }

  @Test
  void aFineTunedTransformerRoundTripsWithItsTrainer() {
    DualEncoderConfig config =
        DualEncoderConfig.transformer(
            io.dynnibal.model.transformer.BertCheckpoint.MINILM, 384, 16, 0, 0, true, 20f);
    try (DualEncoder encoder = DualEncoder.create(config, 8)) {
      DualEncoderTrainer trainer =
          new DualEncoderTrainer(
              encoder,
              new TrainerConfig(
                  new io.dynnibal.training.LearningRateSchedule(5e-5f, 1, 10, 0.05f, 1f),
                  1f,
                  io.dynnibal.model.AdamSettings.DEFAULT,
                  TrainerConfig.DEFAULT_CLIP_NORM));
      train(trainer, 2);
      URI uri = ParameterSnapshots.write(trainer, dir.resolve("bert").toUri(), 2, 8);
      DualEncoderTrainer restored =
          ParameterSnapshots.readTrainer(uri, TrainerConfig.fromScratch(1, 10));
      try (DualEncoder loaded = restored.encoder()) {
        assertEquals(config, loaded.config());
        assertEquals(2, restored.step());
        assertIdentical(encoder.encodeQueryTexts(queries()), loaded.encodeQueryTexts(queries()));
      }
    }
  }

  @Test
  void largeOddSizedArraysCrossTheFileChunks() throws IOException {
    float[] big = new float[(1 << 20) / 4 * 3 + 7];
    for (int i = 0; i < big.length; i++) {
      big[i] = i * 0.5f - 3;
    }
    Path file = dir.resolve("big.f32");
    FloatArrayFile.write(file, List.of(new float[] {1f, 2f, 3f}, big, new float[0]));
    List<float[]> read = FloatArrayFile.read(file);
    assertArrayEquals(new float[] {1f, 2f, 3f}, read.get(0));
    assertArrayEquals(big, read.get(1));
    assertEquals(0, read.get(2).length);
  }

  @Test
  void aRestoredTrainerContinuesExactlyWhereItStopped() {
    Random original = new Random(4);
    try (DualEncoder encoder = DualEncoder.create(SMALL, 4)) {
      DualEncoderTrainer trainer =
          new DualEncoderTrainer(encoder, TrainerConfig.fromScratch(2, 20));
      train(trainer, 6, original);
      URI uri = ParameterSnapshots.write(trainer, dir.toUri(), 6, 4);
      long state = new Random(4).nextLong(); // make the batch sequence reproducible from here
      Random a = new Random(state);
      Random b = new Random(state);
      List<StepResult> continued = train(trainer, 4, a);
      DualEncoderTrainer restored =
          ParameterSnapshots.readTrainer(uri, TrainerConfig.fromScratch(2, 20));
      try (DualEncoder restoredEncoder = restored.encoder()) {
        assertEquals(6, restored.step());
        List<StepResult> replayed = train(restored, 4, b);
        for (int i = 0; i < continued.size(); i++) {
          assertEquals(continued.get(i).step(), replayed.get(i).step());
          assertEquals(
              continued.get(i).loss(),
              replayed.get(i).loss(),
              0f,
              "step " + replayed.get(i).step());
        }
        assertIdentical(
            encoder.encodeTargetTexts(targets()), restoredEncoder.encodeTargetTexts(targets()));
      }
    }
  }

  @Test
  void aTrainerStreamedIntoACheckpointRestoresExactly() throws IOException {
    try (DualEncoder encoder = DualEncoder.create(SMALL, 9)) {
      DualEncoderTrainer trainer =
          new DualEncoderTrainer(encoder, TrainerConfig.fromScratch(2, 20));
      train(trainer, 4, new Random(5));
      java.io.ByteArrayOutputStream stream = new java.io.ByteArrayOutputStream();
      ParameterSnapshots.writeTrainer(trainer, trainer.step(), 9, stream);
      DualEncoderTrainer restored =
          ParameterSnapshots.readTrainer(
              new java.io.ByteArrayInputStream(stream.toByteArray()),
              TrainerConfig.fromScratch(2, 20));
      assertContinuesIdentically(trainer, restored, 4);
    }
  }

  @Test
  void aTruncatedCheckpointStreamIsAClearError() throws IOException {
    try (DualEncoder encoder = DualEncoder.create(SMALL, 9)) {
      DualEncoderTrainer trainer =
          new DualEncoderTrainer(encoder, TrainerConfig.fromScratch(2, 20));
      java.io.ByteArrayOutputStream stream = new java.io.ByteArrayOutputStream();
      ParameterSnapshots.writeTrainer(trainer, trainer.step(), 9, stream);
      byte[] truncated = java.util.Arrays.copyOf(stream.toByteArray(), stream.size() / 2);
      var error =
          assertThrows(
              UncheckedIOException.class,
              () ->
                  ParameterSnapshots.readTrainer(
                      new java.io.ByteArrayInputStream(truncated),
                      TrainerConfig.fromScratch(2, 20)));
      assertTrue(error.getMessage().contains("ends early"), error.getMessage());
    }
  }

  @Test
  void aCheckpointFromBeforeStreamingStillRestores() throws IOException {
    try (DualEncoder encoder = DualEncoder.create(SMALL, 9)) {
      DualEncoderTrainer trainer =
          new DualEncoderTrainer(encoder, TrainerConfig.fromScratch(2, 20));
      train(trainer, 4, new Random(5));
      Path written =
          ParameterSnapshots.toPath(
              ParameterSnapshots.write(trainer, dir.toUri(), trainer.step(), 9));
      // Older checkpoints carried the snapshot's files as byte arrays in operator state.
      java.util.Map<String, byte[]> files = new java.util.LinkedHashMap<>();
      try (var list = Files.list(written)) {
        for (Path file : list.toList()) {
          files.put(file.getFileName().toString(), Files.readAllBytes(file));
        }
      }
      DualEncoderTrainer restored =
          ParameterSnapshots.readTrainer(files, TrainerConfig.fromScratch(2, 20));
      assertContinuesIdentically(trainer, restored, 4);
    }
  }

  /** The restored trainer is at {@code step} and its next steps match the original's exactly. */
  private void assertContinuesIdentically(
      DualEncoderTrainer trainer, DualEncoderTrainer restored, long step) {
    try (DualEncoder restoredEncoder = restored.encoder()) {
      assertEquals(step, restored.step());
      List<StepResult> a = train(trainer, 3, new Random(6));
      List<StepResult> b = train(restored, 3, new Random(6));
      for (int i = 0; i < a.size(); i++) {
        assertEquals(a.get(i).loss(), b.get(i).loss(), 0f);
      }
      assertIdentical(
          trainer.encoder().encodeTargetTexts(targets()),
          restoredEncoder.encodeTargetTexts(targets()));
    }
  }

  @Test
  void versionsAreNeverOverwrittenAndNoHalfWrittenSnapshotIsVisible() throws IOException {
    try (DualEncoder encoder = DualEncoder.create(SMALL, 6)) {
      ParameterSnapshots.write(encoder, dir.toUri(), 2, 6);
      IllegalStateException e =
          assertThrows(
              IllegalStateException.class,
              () -> ParameterSnapshots.write(encoder, dir.toUri(), 2, 6));
      assertTrue(e.getMessage().contains("never overwritten"), e.getMessage());
      try (var entries = Files.list(dir)) {
        assertEquals(
            List.of("model-000000000002"), entries.map(p -> p.getFileName().toString()).toList());
      }
    }
  }

  @Test
  void missingAndForeignLocationsAreClearErrors() {
    IllegalArgumentException missing =
        assertThrows(
            IllegalArgumentException.class,
            () -> ParameterSnapshots.readEncoder(dir.resolve("nothing").toUri()));
    assertTrue(missing.getMessage().contains("no snapshot"), missing.getMessage());
    IllegalArgumentException scheme =
        assertThrows(
            IllegalArgumentException.class,
            () -> ParameterSnapshots.readEncoder(URI.create("s3://bucket/model")));
    assertTrue(scheme.getMessage().contains("only file: URIs"), scheme.getMessage());
    try (DualEncoder encoder = DualEncoder.create(SMALL, 7)) {
      URI uri = ParameterSnapshots.write(encoder, dir.toUri(), 3, 7);
      assertThrows(
          IllegalArgumentException.class,
          () -> ParameterSnapshots.readTrainer(uri, TrainerConfig.fromScratch(1, 1)));
    }
    assertEquals(dir.toUri(), ParameterSnapshots.parse(dir.toString() + "/"));
  }

  private List<String> queries() {
    return task.eval.stream().map(q -> q.text()).toList();
  }

  private List<String> targets() {
    return task.targets.stream().map(t -> t.text()).toList();
  }

  private List<StepResult> train(DualEncoderTrainer trainer, int steps) {
    return train(trainer, steps, new Random(1));
  }

  private List<StepResult> train(DualEncoderTrainer trainer, int steps, Random draw) {
    List<StepResult> results = new java.util.ArrayList<>();
    for (int i = 0; i < steps; i++) {
      TrainingBatch batch = task.batch(trainer.encoder(), draw, 8, 4);
      results.add(trainer.step(batch));
    }
    return results;
  }

  private static void assertIdentical(float[][] expected, float[][] actual) {
    assertEquals(expected.length, actual.length);
    for (int i = 0; i < expected.length; i++) {
      assertArrayEquals(expected[i], actual[i], 0f, "row " + i);
    }
  }
}
