package io.dynnibal.deploy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * and only checkpoints so labelled are candidates.
 */
public final class RetainedCheckpoints {
  static final String LABEL = "dynnibal-job.json";
  private static final ObjectMapper JSON = new ObjectMapper();

  private RetainedCheckpoints() {}

  /**
   * Labels {@code jobId}'s checkpoint directory as the job of {@code groupId}; only for a local
   * ({@code file:}) checkpoint directory, the one a local cluster uses.
   */
  public static void label(String checkpointDir, String jobId, String groupId) throws IOException {
    URI uri = URI.create(checkpointDir);
    if (!"file".equals(uri.getScheme())) {
      return;
    }
    Path dir = Files.createDirectories(Path.of(uri).resolve(jobId));
    DaemonProcess.writeAtomically(
        dir.resolve(LABEL), JSON.writeValueAsString(Map.of("group_id", groupId, "job_id", jobId)));
  }

  /**
   * The newest completed checkpoint (its {@code _metadata} written last) of any job of {@code
   * groupId} under {@code checkpointDir}, as the path Flink restores from.
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
    List<Path> jobs;
    try (Stream<Path> dirs = Files.list(root)) {
      jobs = dirs.filter(d -> groupId.equals(groupOf(d))).toList();
    }
    Optional<Path> newest = Optional.empty();
    long newestTime = Long.MIN_VALUE;
    for (Path job : jobs) {
      try (Stream<Path> checkpoints = Files.list(job)) {
        for (Path chk :
            checkpoints
                .filter(c -> c.getFileName().toString().matches("chk-\\d+"))
                .filter(c -> Files.exists(c.resolve("_metadata")))
                .sorted(Comparator.comparing(Path::toString))
                .toList()) {
          long written = Files.getLastModifiedTime(chk.resolve("_metadata")).toMillis();
          if (written >= newestTime) {
            newestTime = written;
            newest = Optional.of(chk);
          }
        }
      }
    }
    return newest;
  }

  private static String groupOf(Path jobDir) {
    Path label = jobDir.resolve(LABEL);
    try {
      return Files.exists(label)
          ? (String) JSON.readValue(label.toFile(), Map.class).get("group_id")
          : null;
    } catch (IOException e) {
      return null;
    }
  }
}
