package io.dynnibal.deploy;

import io.dynnibal.jobs.config.SecretReferences;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.training.TrainingJobMain;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Submitting the training job to a session cluster: build the job jar with the settings inside
 * ({@link JobJar}), run {@link TrainingJobMain} from it here to build the job graph (reading the
 * targets topic's end offsets from Kafka), and submit the graph with the jar attached ({@link
 * FlinkClusterClient#submit}, what {@code flink run} does; the cluster keeps the jar in its blob
 * store). Kafka secrets go by reference only ({@link SecretReferences}): a literal one is refused
 * before anything is built or uploaded.
 */
public final class JobSubmission {
  private JobSubmission() {}

  /**
   * @param savepoint restore from this savepoint (null: a fresh start, which reads the topics from
   *     their beginning and trains a new model)
   * @return the job id
   */
  public static String submit(
      FlinkClusterClient cluster,
      TrainingJobConfig config,
      String savepoint,
      boolean allowNonRestoredState)
      throws Exception {
    config.validate();
    SecretReferences.requireByReference(config, "the job jar and the job graph");
    // With slot sharing the job needs `parallelism` slots; short of them Flink would wait minutes
    // and then fail the job with a slot-request timeout. Say so now, after a few seconds' grace for
    // a job that is just stopping.
    FlinkClusterClient.Overview overview =
        freeSlots(cluster, config.job.parallelism, Duration.ofSeconds(15));
    if (overview.slotsAvailable() < config.job.parallelism) {
      throw new IllegalStateException(
          "the job needs "
              + config.job.parallelism
              + " free task slots (parallelism), the"
              + " cluster at "
              + cluster.base()
              + " has "
              + overview.slotsAvailable()
              + " of "
              + overview.slotsTotal()
              + " free ("
              + overview.jobsRunning()
              + " job(s) running): stop a job, start the cluster with more --slots"
              + " or --taskmanagers, or lower parallelism");
    }
    Path jar = Files.createTempFile("dynnibal-job-", ".jar");
    try {
      JobJar.write(jar, config.toPropertiesWithSecrets());
      String jobId =
          cluster.submit(
              jar,
              TrainingJobMain.class.getName(),
              List.of(),
              config.job.parallelism,
              savepoint,
              allowNonRestoredState);
      RetainedCheckpoints.label(config.job.checkpointDir, jobId, config.kafka.groupId);
      return jobId;
    } finally {
      Files.deleteIfExists(jar);
    }
  }

  /**
   * Points the job's checkpoints (and, beside them, its parameter snapshots) at the cluster's
   * checkpoint directory, for settings the user left at their defaults ({@code
   * dynnibal-state/...}): on a cluster, where state goes is the cluster's decision, and a
   * checkpoint directory is storage every TaskManager shares.
   *
   * @return what changed, as {@code key=value} lines for the user; empty when the cluster names no
   *     directory
   */
  public static List<String> useClusterDirectories(
      FlinkClusterClient cluster,
      TrainingJobConfig config,
      boolean checkpointDirSet,
      boolean snapshotDirSet)
      throws Exception {
    String clusterDir = cluster.jobManagerConfig().get("execution.checkpointing.dir");
    List<String> changed = new ArrayList<>();
    if (clusterDir == null || clusterDir.isBlank()) {
      return changed;
    }
    if (!checkpointDirSet) {
      config.job.checkpointDir = clusterDir;
      changed.add("checkpoint.dir=" + clusterDir);
    }
    URI uri = URI.create(clusterDir);
    if (!snapshotDirSet && "file".equals(uri.getScheme())) {
      config.job.snapshotDir = Path.of(uri).resolveSibling("snapshots").toString();
      changed.add("snapshot.dir=" + config.job.snapshotDir);
    }
    return changed;
  }

  private static FlinkClusterClient.Overview freeSlots(
      FlinkClusterClient cluster, int needed, Duration grace) throws InterruptedException {
    long deadline = System.nanoTime() + grace.toNanos();
    while (true) {
      FlinkClusterClient.Overview overview =
          cluster
              .overview()
              .orElseThrow(
                  () ->
                      new IllegalStateException(
                          "no Flink REST API at " + cluster.base() + " (is the cluster running?)"));
      // Too few slots in all will not change by waiting; too few free may, when a job is just
      // stopping.
      if (overview.slotsAvailable() >= needed
          || overview.slotsTotal() < needed
          || System.nanoTime() > deadline) {
        return overview;
      }
      Thread.sleep(500);
    }
  }
}
