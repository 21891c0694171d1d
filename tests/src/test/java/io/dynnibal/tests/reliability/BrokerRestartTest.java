package io.dynnibal.tests.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.tests.harness.StreamingClusterExtension;
import io.dynnibal.tests.harness.TrainingJobs;
import io.dynnibal.tests.training.SyntheticCorpus;
import io.dynnibal.trainer.FaultInjection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import org.apache.flink.core.execution.JobClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Kafka broker goes down for a few seconds mid-run and comes back on the same ports and data.
 * The job's clients reconnect (or its tasks fail and restore from the last checkpoint); training
 * continues and every step is committed exactly once, every pair trained.
 */
class BrokerRestartTest {
  @RegisterExtension
  static final StreamingClusterExtension CLUSTER = StreamingClusterExtension.withTaskManagers(1, 2);

  @Test
  @Timeout(240)
  void theJobRecoversFromABrokerRestartWithoutLoss() throws Exception {
    SyntheticCorpus corpus = new SyntheticCorpus(100, 200, 8, 3, 23);
    EmbeddedKafkaBroker kafka =
        EmbeddedKafkaBroker.start(CLUSTER.workDir().resolve("restarting-kafka"));
    try {
      TrainingJobConfig config =
          TrainingJobs.smallConfig(kafka, CLUSTER.workDir(), "restart").validate();
      kafka.createTopics(JobTopics.all(config, 2, (short) 1));

      long published;
      JobClient job;
      List<TrainingMetrics> seen = new ArrayList<>();
      try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties())) {
        publisher.publishTargets(config.targetsTopic(), corpus.targets, null);
        job =
            TrainingJobs.start(
                config, FaultInjection.NONE, TrainingJobs.restarting(20, Duration.ofSeconds(1)));
        TrainingJobs.awaitTargetsIndexed(kafka.clientProperties(), config, job);
        publisher.publishPairs(config.pairsTopic(), corpus.train, "e0", 0, null);
        published = corpus.train.size();
      }
      try {
        try (TopicReader<TrainingMetrics> metrics =
            new TopicReader<>(
                kafka.clientProperties(), config.metricsTopic(), TrainingMetrics.class)) {
          TrainingJobs.awaitStep(metrics, seen, job, published / config.training.batchSize / 2);
        }
        kafka = kafka.restart(Duration.ofSeconds(3));
        try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties());
            TopicReader<TrainingMetrics> metrics =
                new TopicReader<>(
                    kafka.clientProperties(), config.metricsTopic(), TrainingMetrics.class)) {
          publisher.publishPairs(config.pairsTopic(), corpus.train, "e1", 0, null);
          published += corpus.train.size();
          long steps = published / config.training.batchSize;
          List<TrainingMetrics> all = new ArrayList<>();
          TrainingMetrics last =
              TrainingJobs.awaitStep(
                  metrics, all, job, steps); // a new reader: reads the topic from the start
          all.addAll(metrics.poll(Duration.ofSeconds(1)));
          assertEquals(
              LongStream.rangeClosed(1, steps).boxed().toList(),
              all.stream().map(TrainingMetrics::getStep).toList(),
              "committed steps across the broker restart");
          assertEquals(steps * config.training.batchSize, last.getPairsTrained());
          assertEquals(corpus.targets.size(), last.getIndexTargets());
          assertEquals(
              TrainingJobs.publishedPairIds(corpus.train, "e0", "e1"),
              TrainingJobs.trainedPairIds(all),
              "pairs lost or trained twice (audit by pair id)");
        }
      } finally {
        job.cancel().get();
      }
    } finally {
      kafka.close();
    }
  }
}
