package io.dynnibal.snapshot;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.FeatureConfig;
import io.dynnibal.training.DualEncoderTrainer;
import io.dynnibal.training.SyntheticRetrievalTask;
import io.dynnibal.training.TrainerConfig;
import io.dynnibal.training.TrainingBatch;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every file of a snapshot is checked against the checksum recorded when it was written: a damaged
 * copy is refused with the file's name, never loaded as a silently different model; a version is
 * never written twice.
 */
class SnapshotIntegrityTest {
  private static final DualEncoderConfig SMALL =
      new DualEncoderConfig(new FeatureConfig(1 << 12, 32, 8, 3, 4), 16, 32, 24, true, 20f);
  private static final TrainerConfig TRAINER = TrainerConfig.fromScratch(2, 20);

  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(
      strings = {
        "shared.table",
        "shared.network",
        "shared.table.adam",
        "shared.network.adam",
        "manifest.json"
      })
  void aFlippedByteInAnyFileIsRefusedWithItsName(String name) throws IOException {
    try (DualEncoder encoder = DualEncoder.create(SMALL, 3)) {
      URI uri = ParameterSnapshots.write(trained(encoder), dir.toUri(), 1, 3);
      Path file = Path.of(uri).resolve(name);
      byte[] bytes = Files.readAllBytes(file);
      bytes[bytes.length / 2] ^= 0x10;
      Files.write(file, bytes);
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class, () -> ParameterSnapshots.readTrainer(uri, TRAINER));
      assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
      assertTrue(e.getMessage().contains("corrupt"), e.getMessage());
    }
  }

  @Test
  void aTruncatedNetworkIsRefusedWithItsName() throws IOException {
    try (DualEncoder encoder = DualEncoder.create(SMALL, 4)) {
      URI uri = ParameterSnapshots.write(encoder, dir.toUri(), 1, 4);
      Path network = Path.of(uri).resolve("shared.network");
      byte[] bytes = Files.readAllBytes(network);
      Files.write(network, java.util.Arrays.copyOf(bytes, bytes.length - 16));
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> ParameterSnapshots.readEncoder(uri));
      assertTrue(e.getMessage().contains(network + " is corrupt"), e.getMessage());
      assertTrue(e.getMessage().contains((bytes.length - 16) + " bytes"), e.getMessage());
    }
  }

  @Test
  void aSnapshotOfTheFirstFormatWithoutChecksumsStillReads() throws IOException {
    try (DualEncoder encoder = DualEncoder.create(SMALL, 5)) {
      URI uri = ParameterSnapshots.write(encoder, dir.toUri(), 1, 5);
      Path manifest = Path.of(uri).resolve("manifest.json");
      ObjectMapper json = new ObjectMapper();
      ObjectNode old = (ObjectNode) json.readTree(manifest.toFile());
      old.put("formatVersion", 1);
      old.remove("files");
      Files.write(manifest, json.writeValueAsBytes(old));
      Files.delete(manifest.resolveSibling(SnapshotChecksums.MANIFEST_CHECKSUM));
      try (DualEncoder read = ParameterSnapshots.readEncoder(uri)) {
        List<String> texts = List.of("alpha beta", "gamma");
        float[][] expected = encoder.encodeTargetTexts(texts);
        float[][] actual = read.encodeTargetTexts(texts);
        for (int i = 0; i < expected.length; i++) {
          assertArrayEquals(expected[i], actual[i], 0f);
        }
      }
    }
  }

  @Test
  void aVersionAnotherWriterTookIsReportedAsTaken() {
    try (DualEncoder encoder = DualEncoder.create(SMALL, 6)) {
      URI first = ParameterSnapshots.write(encoder, dir.toUri(), 7, 6);
      SnapshotExistsException e =
          assertThrows(
              SnapshotExistsException.class,
              () -> ParameterSnapshots.write(encoder, dir.toUri(), 7, 6));
      assertEquals(Path.of(first), e.existing());
    }
  }

  /** A trainer two steps in, so that its optimiser state is not all zeros. */
  private static DualEncoderTrainer trained(DualEncoder encoder) {
    DualEncoderTrainer trainer = new DualEncoderTrainer(encoder, TRAINER);
    SyntheticRetrievalTask task = new SyntheticRetrievalTask(20, 40, 4, 2, 7);
    Random random = new Random(8);
    for (int i = 0; i < 2; i++) {
      TrainingBatch batch = task.batch(encoder, random, 8, 4);
      trainer.step(batch);
    }
    return trainer;
  }
}
