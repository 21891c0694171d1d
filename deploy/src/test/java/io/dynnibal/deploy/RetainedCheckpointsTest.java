package io.dynnibal.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which retained checkpoint {@code submit --from-latest-checkpoint} resumes from. */
class RetainedCheckpointsTest {
  @Test
  void theNewestCompletedCheckpointOfTheSameGroupIsChosen(@TempDir Path root) throws Exception {
    String dir = root.toUri().toString();
    RetainedCheckpoints.label(dir, "job-a", "mine");
    RetainedCheckpoints.label(dir, "job-b", "mine"); // resumed once already
    RetainedCheckpoints.label(dir, "job-c", "theirs");
    checkpoint(root, "job-a", 7, 1_000);
    checkpoint(root, "job-b", 3, 2_000);
    checkpoint(root, "job-c", 9, 9_000); // newer, but another job's offsets
    Files.createDirectories(root.resolve("job-b").resolve("chk-4")); // in progress: no _metadata
    checkpoint(root, "unlabelled", 5, 10_000);

    assertEquals(
        Optional.of(root.resolve("job-b").resolve("chk-3")),
        RetainedCheckpoints.latest(dir, "mine"));
    assertEquals(
        Optional.of(root.resolve("job-c").resolve("chk-9")),
        RetainedCheckpoints.latest(dir, "theirs"));
    assertTrue(RetainedCheckpoints.latest(dir, "nobody").isEmpty());
  }

  @Test
  void aRemoteDirectoryIsNotSearched() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> RetainedCheckpoints.latest("s3://bucket/checkpoints", "mine"));
    assertTrue(e.getMessage().contains("--from-savepoint"), e.getMessage());
  }

  private static void checkpoint(Path root, String job, int n, long writtenAt) throws Exception {
    Path metadata =
        Files.createDirectories(root.resolve(job).resolve("chk-" + n)).resolve("_metadata");
    Files.writeString(metadata, "x");
    Files.setLastModifiedTime(metadata, FileTime.fromMillis(writtenAt));
  }
}
