package io.dynnibal.tests.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.deploy.FlinkCluster;
import io.dynnibal.deploy.JobSubmission;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.tests.harness.ProcessDeployment;
import io.dynnibal.tests.harness.TrainingJobs;
import io.dynnibal.tests.training.SyntheticCorpus;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code kill -9} of a TaskManager mid-training, on the real deployment (broker, JobManager and two
 * TaskManagers each a process): the cluster's supervisor starts a replacement, the job restores
 * every operator from its last checkpoint on it by itself (no resubmission), and the pair-id audit
 * shows every published pair trained exactly once.
 */
class TaskManagerKillTest {
  @Test
  @Timeout(360)
  void aKilledTaskManagerIsReplacedAndTheJobRestoresWithoutLossOrRepeat() throws Exception {
    try (ProcessDeployment deployment = ProcessDeployment.start("tm-kill", 2, 1)) {
      TrainingJobConfig config =
          TrainingJobs.smallConfig(deployment.bootstrap(), deployment.work, "tmkill");
      config.job.parallelism = 2; // one slot on each TaskManager: the kill takes half the job
      Properties kafka = config.clientProperties();
      JobTopics.createMissing(kafka, config, 2, (short) 1);
      SyntheticCorpus corpus = new SyntheticCorpus(150, 300, 6, 4, 31);
      try (CorpusPublisher publisher = new CorpusPublisher(kafka)) {
        publisher.publishTargets(config.targetsTopic(), corpus.targets, null);
        publisher.publishPairs(config.pairsTopic(), corpus.train, "p0", 0, null);
      }
      JobSubmission.useClusterDirectories(deployment.rest(), config, false, false);
      String job = JobSubmission.submit(deployment.rest(), config, null, false);
      long pass = corpus.train.size() / config.training.batchSize;
      deployment.follow(job, kafka, config, pass / 2, Duration.ofSeconds(120));

      long killed = deployment.killTaskManager(1);
      FlinkCluster.Status replaced =
          deployment.awaitCluster(
              s -> s.ready() && s.restarts().getOrDefault("taskmanager-1", 0) == 1,
              Duration.ofSeconds(90));
      assertNotEquals(killed, replaced.taskManagerPids().get(0), "a new TaskManager process");

      try (CorpusPublisher publisher = new CorpusPublisher(kafka)) {
        publisher.publishPairs(config.pairsTopic(), corpus.train, "p1", 0, null);
      }
      deployment.follow(job, kafka, config, 2 * pass, Duration.ofSeconds(150));
      assertEquals("RUNNING", deployment.rest().jobState(job), "the same job went on");

      List<TrainingMetrics> committed = ProcessDeployment.committedReports(kafka, config);
      ProcessDeployment.assertExactlyOnce(
          committed, 2 * pass, TrainingJobs.publishedPairIds(corpus.train, "p0", "p1"));
      TrainingMetrics last = committed.get(committed.size() - 1);
      assertEquals(corpus.targets.size(), last.getIndexTargets(), "the index after the restore");
      assertTrue(
          deployment.rest().latestFailure(job).orElse("").length() > 0,
          "the job failed over (its latest failure is the lost TaskManager)");
      deployment.rest().cancel(job);
    }
  }
}
