package io.dynnibal.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Settings from the command line: the layers, and telling what the user set from a default. */
class JobSettingsOptionsTest {
  @Test
  void theFileOverridesDefaultsAndSetOverridesTheFile(@TempDir Path dir) throws Exception {
    JobSettingsOptions options = new JobSettingsOptions();
    options.configFile =
        Files.writeString(dir.resolve("job.properties"), "batch.size=64\nshards=4\n");
    options.overrides = List.of("shards=5");
    var config = options.config(List.of("batch.size=32", "group.id=command-default"));
    assertEquals(64, config.training.batchSize);
    assertEquals(5, config.job.shards);
    assertEquals("command-default", config.kafka.groupId);
  }

  @Test
  void onlyWhatTheUserWroteCountsAsSet(@TempDir Path dir) throws Exception {
    JobSettingsOptions options = new JobSettingsOptions();
    assertFalse(options.userSets("checkpoint.dir"));
    options.configFile =
        Files.writeString(dir.resolve("job.properties"), "checkpoint.dir=file:///x\n");
    options.overrides = List.of("snapshot.dir=/y");
    assertTrue(options.userSets("checkpoint.dir"));
    assertTrue(options.userSets("snapshot.dir"));
    assertFalse(options.userSets("checkpoint.interval"));
  }
}
