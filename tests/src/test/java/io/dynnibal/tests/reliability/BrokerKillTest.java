package io.dynnibal.tests.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.tests.harness.ProcessDeployment;
import io.dynnibal.tests.harness.StreamingClusterExtension;
import io.dynnibal.tests.harness.TrainingJobs;
import io.dynnibal.tests.training.SyntheticCorpus;
import io.dynnibal.trainer.FaultInjection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.flink.core.execution.JobClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code kill -9} of the Kafka broker mid-training - a process of its own, as {@code dynnibal kafka
 * start} runs it, so no shutdown hook flushes or closes anything - then the broker started again on
 * the same ports and data. The job's open transactions die with the broker; its tasks fail and
 * restore from the last checkpoint, and the pair-id audit shows every published pair trained
 * exactly once. (A clean broker restart: BrokerRestartTest.)
 */
class BrokerKillTest {
  @RegisterExtension
  static final StreamingClusterExtension CLUSTER = StreamingClusterExtension.withTaskManagers(1, 2);

  @Test
  @Timeout(300)
  void theJobRecoversFromAKilledBrokerWithoutLossOrRepeat() throws Exception {
    SyntheticCorpus corpus = new SyntheticCorpus(100, 200, 8, 3, 37);
    try (ProcessDeployment broker = ProcessDeployment.start("broker-kill", 0, 0)) {
      TrainingJobConfig config =
          TrainingJobs.smallConfig(broker.bootstrap(), CLUSTER.workDir(), "brokerkill").validate();
      Properties kafka = config.clientProperties();
      JobTopics.createMissing(kafka, config, 2, (short) 1);
      long pass = corpus.train.size() / config.training.batchSize;
      JobClient job;
      try (CorpusPublisher publisher = new CorpusPublisher(kafka)) {
        publisher.publishTargets(config.targetsTopic(), corpus.targets, null);
        job =
            TrainingJobs.start(
                config, FaultInjection.NONE, TrainingJobs.restarting(30, Duration.ofSeconds(1)));
        TrainingJobs.awaitTargetsIndexed(kafka, config, job);
        publisher.publishPairs(config.pairsTopic(), corpus.train, "k0", 0, null);
      }
      try {
        try (TopicReader<TrainingMetrics> metrics =
            new TopicReader<>(kafka, config.metricsTopic(), TrainingMetrics.class)) {
          TrainingJobs.awaitStep(metrics, new ArrayList<>(), job, pass / 2);
        }
        broker.killBroker();
        Thread.sleep(3000); // the job notices: fetches and commits fail
        broker.restartBroker();
        try (CorpusPublisher publisher = new CorpusPublisher(kafka);
            TopicReader<TrainingMetrics> metrics =
                new TopicReader<>(kafka, config.metricsTopic(), TrainingMetrics.class)) {
          publisher.publishPairs(config.pairsTopic(), corpus.train, "k1", 0, null);
          TrainingJobs.awaitStep(metrics, new ArrayList<>(), job, 2 * pass);
        }
        List<TrainingMetrics> committed = ProcessDeployment.committedReports(kafka, config);
        ProcessDeployment.assertExactlyOnce(
            committed, 2 * pass, TrainingJobs.publishedPairIds(corpus.train, "k0", "k1"));
        assertEquals(corpus.targets.size(), committed.get(committed.size() - 1).getIndexTargets());
      } finally {
        job.cancel().get();
      }
    }
  }
}
