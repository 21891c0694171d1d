package io.dynnibal.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The checkpoints a job leaves behind when it ends without a savepoint (its JobManager killed, the
 * cluster stopped): Flink retains them under {@code <checkpoint.dir>/<job id>/chk-<n>/}, and a new
 * submission restores from one as from a savepoint. A standalone cluster without high availability
 * forgets its jobs with its JobManager, so this is how such a job is resumed.
 *
 * <p>Several jobs may share a checkpoint directory, and a checkpoint holds the source offsets of
 * its own topics: resuming from another job's would train on the wrong data. So each submission
 * labels its job's directory with the consumer group ({@code dynnibal-job.json}; one job per group)
 * and its submission number in that group, and only checkpoints so labelled are candidates.
 *
 * <p>The newest is found by numbers, never by file times (a copy, a restore or a clock step moves
 * those): the job of the highest submission number with a completed checkpoint, and in it the
 * highest checkpoint id. Where the labels cannot say which job is newest (labels written before
 * they carried a number), or a label cannot be read, nothing is chosen: the error says which
 * directories to choose from with {@code --from-savepoint}.
 */
public final class RetainedCheckpoints {
  static final String LABEL = "dynnibal-job.json";
  private static final ObjectMapper JSON = new ObjectMapper();

  private RetainedCheckpoints() {}

  /** A job directory's label: its group and its submission number there (0: not numbered). */
  private record Label(String groupId, long submission) {}

  /** A labelled job of the group with its newest completed checkpoint. */
  private record Candidate(Path job, long submission, long checkpointId, Path checkpoint) {}

  /**
   * Labels {@code jobId}'s checkpoint directory as the job of {@code groupId}, numbered after every
   * job of the group labelled before it; only for a local ({@code file:}) checkpoint directory, the
   * one a local cluster uses.
   */
  public static void label(String checkpointDir, String jobId, String groupId) throws IOException {
    URI uri = URI.create(checkpointDir);
    if (!"file".equals(uri.getScheme())) {
      return;
    }
    Path root = Files.createDirectories(Path.of(uri));
    long submission = 1;
    for (Path job : jobDirectories(root)) {
      try {
        Label l = labelOf(job);
        if (l != null && groupId.equals(l.groupId())) {
          submission = Math.max(submission, l.submission() + 1);
        }
      } catch (IllegalStateException unreadable) {
        // Not counted here; latest() refuses to choose while it is there.
      }
    }
    Path dir = Files.createDirectories(root.resolve(jobId));
    DaemonProcess.writeAtomically(
        dir.resolve(LABEL),
        JSON.writeValueAsString(
            Map.of("group_id", groupId, "job_id", jobId, "submission", submission)));
  }

  /**
   * The newest completed checkpoint (one with its {@code _metadata}) of the jobs of {@code groupId}
   * under {@code checkpointDir}, as the path Flink restores from.
   *
   * @throws IllegalStateException when a label cannot be read, or two jobs of the group could each
   *     be the newest
   */
  public static Optional<Path> latest(String checkpointDir, String groupId) throws IOException {
    URI uri = URI.create(checkpointDir);
    if (!"file".equals(uri.getScheme())) {
      throw new IllegalArgumentException(
          "only a local checkpoint.dir (file:) is searched; give the checkpoint's path"
              + " with --from-savepoint instead: "
              + checkpointDir);
    }
    Path root = Path.of(uri);
    if (!Files.isDirectory(root)) {
      return Optional.empty();
    }
    List<Candidate> candidates = new ArrayList<>();
    for (Path job : jobDirectories(root)) {
      Label l = labelOf(job);
      if (l != null && groupId.equals(l.groupId())) {
        newestCheckpoint(job, l.submission()).ifPresent(candidates::add);
      }
    }
    candidates.sort(Comparator.comparingLong(Candidate::submission).reversed());
    if (candidates.size() > 1 && candidates.get(0).submission() == candidates.get(1).submission()) {
      List<Path> tied =
          candidates.stream()
              .filter(c -> c.submission() == candidates.get(0).submission())
              .map(Candidate::checkpoint)
              .toList();
      throw new IllegalStateException(
          "jobs of group.id "
              + groupId
              + " under "
              + root
              + " carry no submission numbers that say which is newest; resume one with"
              + " --from-savepoint: "
              + tied);
    }
    return candidates.stream().findFirst().map(Candidate::checkpoint);
  }

  /** The completed checkpoint of {@code job} with the highest id, if any. */
  private static Optional<Candidate> newestCheckpoint(Path job, long submission)
      throws IOException {
    Candidate newest = null;
    try (Stream<Path> checkpoints = Files.list(job)) {
      for (Path chk : checkpoints.toList()) {
        String name = chk.getFileName().toString();
        if (!name.matches("chk-\\d{1,18}") || !Files.exists(chk.resolve("_metadata"))) {
          continue; // not a checkpoint, or one still being written
        }
        long id = Long.parseLong(name.substring("chk-".length()));
        if (newest == null || id > newest.checkpointId()) {
          newest = new Candidate(job, submission, id, chk);
        }
      }
    }
    return Optional.ofNullable(newest);
  }

  private static List<Path> jobDirectories(Path root) throws IOException {
    try (Stream<Path> dirs = Files.list(root)) {
      return dirs.filter(Files::isDirectory).sorted().toList();
    }
  }

  /** The directory's label; null when it has none. */
  private static Label labelOf(Path jobDir) {
    Path label = jobDir.resolve(LABEL);
    if (!Files.exists(label)) {
      return null;
    }
    try {
      JsonNode node = JSON.readTree(label.toFile());
      JsonNode group = node == null ? null : node.get("group_id");
      if (group == null || !group.isTextual()) {
        throw new IOException("no group_id");
      }
      JsonNode submission = node.get("submission");
      return new Label(group.asText(), submission == null ? 0 : submission.asLong());
    } catch (IOException e) {
      throw new IllegalStateException(
          "cannot read the job label "
              + label
              + " ("
              + e.getMessage()
              + "): fix or remove it, or resume with --from-savepoint",
          e);
    }
  }
}
