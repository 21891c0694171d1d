package io.dynnibal.tests.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.deploy.FlinkClusterClient;
import io.dynnibal.deploy.JobSubmission;
import io.dynnibal.deploy.RetainedCheckpoints;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.tests.harness.Cli;
import io.dynnibal.tests.harness.ProcessDeployment;
import io.dynnibal.tests.harness.TrainingJobs;
import io.dynnibal.tests.training.SyntheticCorpus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code kill -9} of the JobManager mid-training. A standalone cluster without high availability
 * keeps its jobs only in the JobManager's memory: the supervisor starts a new JobManager, the
 * TaskManager registers with it, and the job is gone. What survives is the job's retained
 * checkpoints, and {@code submit --from-latest-checkpoint} resumes from the newest of them: the
 * pair-id audit shows every published pair trained exactly once across the loss.
 */
class JobManagerKillTest {
  @Test
  @Timeout(360)
  void aJobLostWithItsJobManagerResumesFromItsLatestCheckpoint() throws Exception {
    try (ProcessDeployment deployment = ProcessDeployment.start("jm-kill", 1, 2)) {
      TrainingJobConfig config =
          TrainingJobs.smallConfig(deployment.bootstrap(), deployment.work, "jmkill");
      Properties kafka = config.clientProperties();
      JobTopics.createMissing(kafka, config, 2, (short) 1);
      SyntheticCorpus corpus = new SyntheticCorpus(150, 300, 6, 4, 41);
      try (CorpusPublisher publisher = new CorpusPublisher(kafka)) {
        publisher.publishTargets(config.targetsTopic(), corpus.targets, null);
        publisher.publishPairs(config.pairsTopic(), corpus.train, "j0", 0, null);
      }
      JobSubmission.useClusterDirectories(deployment.rest(), config, false, false);
      String first = JobSubmission.submit(deployment.rest(), config, null, false);
      long pass = corpus.train.size() / config.training.batchSize;
      deployment.follow(first, kafka, config, pass / 2, Duration.ofSeconds(120));

      deployment.killJobManager();
      deployment.awaitCluster(
          s -> s.ready() && s.restarts().getOrDefault("jobmanager", 0) == 1,
          Duration.ofSeconds(90));
      FlinkClusterClient rest = deployment.rest();
      assertEquals(List.of(), rest.jobs(), "a JobManager without HA forgets its jobs");
      awaitFreeSlots(
          rest, config.job.parallelism); // the TaskManager lets go of the lost job's tasks

      // The documented resume: the same settings, from the newest checkpoint of this group.id.
      Path latest =
          RetainedCheckpoints.latest(config.job.checkpointDir, config.kafka.groupId).orElseThrow();
      Path settings = deployment.work.resolve("job.properties");
      Properties written = new Properties();
      written.putAll(config.toPropertiesWithSecrets());
      try (var writer = Files.newBufferedWriter(settings)) {
        written.store(writer, null);
      }
      String printed =
          Cli.run(
              0,
              "submit",
              "--config",
              settings.toString(),
              "--from-latest-checkpoint",
              "--jobmanager",
              rest.base().toString());
      assertTrue(printed.contains("restored from " + latest.toUri()), printed);
      String resumed = rest.jobs().get(0).id();
      try (CorpusPublisher publisher = new CorpusPublisher(kafka)) {
        publisher.publishPairs(config.pairsTopic(), corpus.train, "j1", 0, null);
      }
      deployment.follow(resumed, kafka, config, 2 * pass, Duration.ofSeconds(150));

      List<TrainingMetrics> committed = ProcessDeployment.committedReports(kafka, config);
      ProcessDeployment.assertExactlyOnce(
          committed, 2 * pass, TrainingJobs.publishedPairIds(corpus.train, "j0", "j1"));
      rest.cancel(resumed);
    }
  }

  private static void awaitFreeSlots(FlinkClusterClient rest, int needed) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    while (rest.overview().map(o -> o.slotsAvailable() < needed).orElse(true)) {
      assertTrue(System.nanoTime() < deadline, "slots never freed: " + rest.overview());
      Thread.sleep(500);
    }
  }
}
