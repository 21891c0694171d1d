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
    RetainedCheckpoints.label(dir, "job-b", "mine"); // submitted after job-a
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
  void checkpointIdsOrderTheCheckpointsNotFileTimesOrNames(@TempDir Path root) throws Exception {
    String dir = root.toUri().toString();
    RetainedCheckpoints.label(dir, "job-a", "mine");
    checkpoint(root, "job-a", 10, 1_000);
    checkpoint(root, "job-a", 9, 5_000); // written later by the clock (a copy, a clock step)
    assertEquals(
        Optional.of(root.resolve("job-a").resolve("chk-10")),
        RetainedCheckpoints.latest(dir, "mine"));
  }

  @Test
  void theLaterSubmissionWinsWhateverItsCheckpointIdsOrTimes(@TempDir Path root) throws Exception {
    String dir = root.toUri().toString();
    RetainedCheckpoints.label(dir, "job-a", "mine");
    RetainedCheckpoints.label(dir, "job-b", "mine"); // started afresh: its ids begin again
    checkpoint(root, "job-a", 40, 9_000);
    checkpoint(root, "job-b", 2, 1_000);
    assertEquals(
        Optional.of(root.resolve("job-b").resolve("chk-2")),
        RetainedCheckpoints.latest(dir, "mine"));
  }

  @Test
  void anUnreadableLabelIsAnErrorThatNamesIt(@TempDir Path root) throws Exception {
    String dir = root.toUri().toString();
    RetainedCheckpoints.label(dir, "job-a", "mine");
    checkpoint(root, "job-a", 3, 1_000);
    Path broken = Files.createDirectories(root.resolve("job-b")).resolve(RetainedCheckpoints.LABEL);
    Files.writeString(broken, "{\"group_id\": \"mi");
    checkpoint(root, "job-b", 8, 2_000);
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> RetainedCheckpoints.latest(dir, "mine"));
    assertTrue(e.getMessage().contains(broken.toString()), e.getMessage());
  }

  @Test
  void jobsWhoseLabelsCannotSayWhichIsNewestAreRefused(@TempDir Path root) throws Exception {
    String dir = root.toUri().toString();
    for (String job : new String[] {"job-a", "job-b"}) { // labels written before they were numbered
      Files.writeString(
          Files.createDirectories(root.resolve(job)).resolve(RetainedCheckpoints.LABEL),
          "{\"group_id\": \"mine\", \"job_id\": \"" + job + "\"}");
    }
    checkpoint(root, "job-a", 3, 1_000);
    checkpoint(root, "job-b", 5, 2_000);
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> RetainedCheckpoints.latest(dir, "mine"));
    assertTrue(
        e.getMessage().contains("job-a") && e.getMessage().contains("job-b"), e.getMessage());
    // A numbered submission after them is the newest.
    RetainedCheckpoints.label(dir, "job-c", "mine");
    checkpoint(root, "job-c", 1, 500);
    assertEquals(
        Optional.of(root.resolve("job-c").resolve("chk-1")),
        RetainedCheckpoints.latest(dir, "mine"));
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
