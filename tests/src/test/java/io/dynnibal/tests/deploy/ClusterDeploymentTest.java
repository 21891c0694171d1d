package io.dynnibal.tests.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.deploy.FlinkCluster;
import io.dynnibal.deploy.FlinkClusterClient;
import io.dynnibal.deploy.JobSubmission;
import io.dynnibal.deploy.KafkaBroker;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.stream.JobMetrics;
import io.dynnibal.tests.harness.ListeningSockets;
import io.dynnibal.tests.harness.ProcessDeployment;
import io.dynnibal.tests.harness.TrainingJobs;
import io.dynnibal.tests.harness.WorkDirs;
import io.dynnibal.tests.training.SyntheticCorpus;
import io.dynnibal.watch.MetricsWatch;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The deployment path on loopback, every server a process of its own: a Kafka broker ({@code
 * dynnibal kafka start}), a Flink session cluster of a JobManager and two TaskManagers ({@code
 * dynnibal cluster start}), the job submitted over REST ({@code dynnibal submit}), followed on its
 * metrics topic ({@code dynnibal watch}), stopped with a savepoint ({@code dynnibal cancel
 * --savepoint}) and resumed from it, then every process stopped by its PID.
 */
class ClusterDeploymentTest {
  @Test
  @Timeout(300)
  void submitWatchStopWithSavepointResumeAndStopEveryProcess() throws Exception {
    Path work = WorkDirs.fresh("cluster-deployment").toAbsolutePath();
    Path kafkaDir = work.resolve("kafka");
    Path clusterDir = work.resolve("cluster");
    List<Long> pids = new ArrayList<>();
    List<FlinkClusterClient> clients = new ArrayList<>();
    try {
      KafkaBroker.Status broker =
          KafkaBroker.start(kafkaDir, freePort(), freePort(), Duration.ofSeconds(90));
      pids.add(broker.pid());
      FlinkCluster.Status cluster =
          FlinkCluster.start(
              clusterDir,
              new FlinkCluster.Options(
                  freePort(),
                  freePort(),
                  2,
                  1,
                  "2g",
                  "768m",
                  ProcessDeployment.freePortRange(3),
                  false),
              Duration.ofSeconds(120));
      pids.add(cluster.jobManagerPid());
      pids.addAll(cluster.taskManagerPids());
      assertTrue(cluster.ready(), "both TaskManagers registered: " + cluster);
      assertEquals(2, cluster.overview().orElseThrow().slotsTotal());
      assertEquals(
          4,
          pids.stream().distinct().filter(p -> p != ProcessHandle.current().pid()).count(),
          "broker, JobManager and TaskManagers are processes of their own: " + pids);

      TrainingJobConfig config = TrainingJobs.smallConfig(broker.bootstrap(), work, "deploy");
      config.job.parallelism =
          2; // one shard subtask per TaskManager: batches and replies cross processes
      Properties kafka = config.clientProperties();
      JobTopics.createMissing(kafka, config, 2, (short) 1);
      SyntheticCorpus corpus = new SyntheticCorpus(200, 400, 6, 4, 7);
      try (CorpusPublisher publisher = new CorpusPublisher(kafka)) {
        publisher.publishTargets(config.targetsTopic(), corpus.targets, null);
        publisher.publishPairs(config.pairsTopic(), corpus.train, "p0", 0, null);
      }

      FlinkClusterClient rest = new FlinkClusterClient(cluster.restUrl());
      clients.add(rest);
      // State goes where the cluster keeps it, as `submit` does for settings the user left unset.
      assertEquals(2, JobSubmission.useClusterDirectories(rest, config, false, false).size());
      assertEquals(
          clusterDir.resolve("checkpoints").toUri(), java.net.URI.create(config.job.checkpointDir));
      assertEquals(clusterDir.resolve("snapshots").toString(), config.job.snapshotDir);
      TrainingJobConfig tooWide = config.copy();
      tooWide.job.parallelism = 3;
      IllegalStateException noSlots =
          assertThrows(
              IllegalStateException.class, () -> JobSubmission.submit(rest, tooWide, null, false));
      assertTrue(noSlots.getMessage().contains("needs 3 free task slots"), noSlots.getMessage());
      String first = JobSubmission.submit(rest, config, null, false);
      MetricsWatch.Seen before = follow(rest, first, kafka, config, 20);
      assertTrue(before.last().getStep() >= 20, "the metrics topic advanced");

      // What Prometheus scrapes: the job's figures under stable names, from the TaskManagers.
      String scraped = scrape(FlinkCluster.status(clusterDir).prometheus());
      for (String name : List.of(JobMetrics.STEP, JobMetrics.LOSS, JobMetrics.INDEX_TARGETS)) {
        assertTrue(
            scraped.contains(JobMetrics.prometheusName(name)),
            JobMetrics.prometheusName(name) + " is exposed");
      }

      // Every server of the broker, the JobManager and the TaskManagers (RPC, blobs, shuffle,
      // REST, Prometheus) answers on loopback only.
      for (long pid : pids) {
        Set<InetSocketAddress> listening = ListeningSockets.of(pid);
        assertTrue(!listening.isEmpty(), "process " + pid + " listens nowhere");
        assertEquals(
            List.of(),
            ListeningSockets.beyondLoopback(listening),
            "process " + pid + " listens on " + listening);
      }

      String savepoint = rest.stopWithSavepoint(first, null, Duration.ofMinutes(2));
      assertTrue(savepoint.contains(clusterDir.resolve("savepoints").toString()), savepoint);
      assertTrue(
          Files.exists(Path.of(java.net.URI.create(savepoint)).resolve("_metadata")), savepoint);
      assertEquals("FINISHED", rest.jobState(first));
      long stoppedAt = lastCommittedStep(kafka, config);
      try (Stream<Path> checkpoints = Files.list(clusterDir.resolve("checkpoints"))) {
        assertEquals(1, checkpoints.count(), "the job checkpointed into the cluster's directory");
      }

      // A second pass to train on, then the same settings from the savepoint.
      try (CorpusPublisher publisher = new CorpusPublisher(kafka)) {
        publisher.publishPairs(config.pairsTopic(), corpus.train, "p1", 0, null);
      }
      String resumed = JobSubmission.submit(rest, config, savepoint, false);
      follow(rest, resumed, kafka, config, stoppedAt + 20);
      assertEquals(
          List.of(resumed, first), rest.jobs().stream().map(FlinkClusterClient.Job::id).toList());

      // Exactly once across the stop: the steps on the topic run 1, 2, ... without a gap or a
      // repeat, and the resumed job went on from the savepoint's step instead of starting again at
      // 1.
      List<Long> steps = steps(kafka, config);
      for (int i = 0; i < steps.size(); i++) {
        assertEquals(i + 1, steps.get(i), "step " + (i + 1) + " reported once, in order: " + steps);
      }
      assertTrue(steps.size() > stoppedAt + 1, "the resumed job trained on");
      assertEquals(0, before.last().getPairsDeadLettered());

      rest.cancel(resumed);
      awaitState(rest, resumed, "CANCELED");
    } finally {
      clients.forEach(FlinkClusterClient::close);
      try {
        FlinkCluster.stop(clusterDir, Duration.ofSeconds(30));
      } finally {
        KafkaBroker.stop(kafkaDir, Duration.ofSeconds(30));
      }
    }
    for (long pid : pids) {
      assertFalse(
          ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
          "process " + pid + " is gone");
    }
    FlinkCluster.Status after = FlinkCluster.status(clusterDir);
    assertFalse(after.running());
    try (Stream<Path> files = Files.list(clusterDir)) {
      assertEquals(
          List.of(),
          files.filter(f -> f.toString().endsWith(".pid")).toList(),
          "no PID file is left");
    }
  }

  /** Every endpoint's metrics, concatenated. */
  private static String scrape(List<java.net.URI> endpoints) throws Exception {
    assertEquals(3, endpoints.size(), "the JobManager and both TaskManagers serve metrics");
    StringBuilder all = new StringBuilder();
    java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
    for (java.net.URI uri : endpoints) {
      all.append(
          http.send(
                  java.net.http.HttpRequest.newBuilder(uri).build(),
                  java.net.http.HttpResponse.BodyHandlers.ofString())
              .body());
    }
    return all.toString();
  }

  /**
   * Follows the metrics topic until {@code step}; a job that fails or stalls fails the test with
   * its exception.
   */
  private static MetricsWatch.Seen follow(
      FlinkClusterClient rest, String job, Properties kafka, TrainingJobConfig config, long step)
      throws Exception {
    return ProcessDeployment.follow(rest, job, kafka, config, step, Duration.ofSeconds(90));
  }

  private static long lastCommittedStep(Properties kafka, TrainingJobConfig config) {
    List<Long> steps = steps(kafka, config);
    assertFalse(steps.isEmpty());
    return steps.get(steps.size() - 1);
  }

  /** Every committed report's step, in topic order. */
  private static List<Long> steps(Properties kafka, TrainingJobConfig config) {
    return ProcessDeployment.committedReports(kafka, config).stream()
        .map(TrainingMetrics::getStep)
        .toList();
  }

  private static void awaitState(FlinkClusterClient rest, String job, String state)
      throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!rest.jobState(job).equals(state)) {
      assertTrue(System.nanoTime() < deadline, "job " + job + " never reached " + state);
      Thread.sleep(300);
    }
  }

  private static int freePort() throws Exception {
    return ProcessDeployment.freePort();
  }
}
