package io.dynnibal.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.FeatureConfig;
import io.dynnibal.snapshot.ParameterSnapshots;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelVersionStoreTest {
  private static final DualEncoderConfig SMALL =
      new DualEncoderConfig(new FeatureConfig(1 << 10, 16, 4, 3, 4), 8, 16, 8, true, 20f);

  @TempDir Path dir;

  @Test
  void versionsAreDeletedBelowAndOtherFoldersAreKept() throws Exception {
    ModelVersionStore store = new ModelVersionStore(dir.toString(), "r1", 7);
    try (DualEncoder encoder = DualEncoder.create(SMALL, 7)) {
      for (long v = 1; v <= 5; v++) {
        ParameterSnapshots.write(encoder, store.base(), v, 7);
      }
      store.keep(encoder, 300);
      store.deleteBelow(2);
      assertEquals(
          List.of("kept", "model-2", "model-3", "model-4", "model-5"), list(dir.resolve("run-r1")));
    }
  }

  @Test
  void theNewestVersionIsTheHighestNumberOnDiskIgnoringOtherFolders() throws Exception {
    ModelVersionStore store = new ModelVersionStore(dir.toString(), "r3", 7);
    assertEquals(0, store.newestVersion(), "no directory yet");
    try (DualEncoder encoder = DualEncoder.create(SMALL, 7)) {
      for (long v : new long[] {2, 11, 9}) {
        ParameterSnapshots.write(encoder, store.base(), v, 7);
      }
      store.keep(encoder, 500); // kept/model-500 is not a version
      assertEquals(11, store.newestVersion());
      store.deleteBelow(11);
      assertEquals(11, store.newestVersion());
    }
  }

  @Test
  void theFinalModelIsWrittenOnce() throws Exception {
    ModelVersionStore store = new ModelVersionStore(dir.toString(), "r2", 7);
    try (DualEncoder encoder = DualEncoder.create(SMALL, 7)) {
      store.writeFinal(encoder, 100);
      Path written = dir.resolve("run-r2").resolve("final");
      long modified = Files.getLastModifiedTime(written).toMillis();
      store.writeFinal(encoder, 100); // a replay after a restore
      assertEquals(1, list(written).size());
      assertTrue(Files.getLastModifiedTime(written).toMillis() >= modified);
    }
  }

  private static List<String> list(Path p) throws Exception {
    try (Stream<Path> s = Files.list(p)) {
      // version directories are zero-padded (model-000000000002): compare by number
      return s.map(x -> x.getFileName().toString().replaceAll("model-0+(\\d)", "model-$1"))
          .sorted()
          .toList();
    }
  }
}
