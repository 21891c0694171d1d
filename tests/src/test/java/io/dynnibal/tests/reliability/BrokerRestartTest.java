package io.dynnibal.tests.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.dynnibal.jobs.embedded.EmbeddedKafkaBroker;
import io.dynnibal.jobs.kafka.CorpusPublisher;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.jobs.training.TrainingJob;
import io.dynnibal.jobs.training.TrainingJobConfig;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.tests.harness.StreamingClusterExtension;
import io.dynnibal.tests.training.SyntheticCorpus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Kafka broker goes down for a few seconds mid-run and comes back on the same ports and data. The job's clients
 * reconnect (or its tasks fail and restore from the last checkpoint); training continues and every step is committed
 * exactly once, every pair trained.
 */
class BrokerRestartTest {
  @RegisterExtension
  static final StreamingClusterExtension CLUSTER = StreamingClusterExtension.withTaskManagers(1, 2);

  @Test
  @Timeout(240)
  void theJobRecoversFromABrokerRestartWithoutLoss() throws Exception {
    SyntheticCorpus corpus = new SyntheticCorpus(100, 200, 8, 3, 23);
    EmbeddedKafkaBroker kafka = EmbeddedKafkaBroker.start(CLUSTER.workDir().resolve("restarting-kafka"));
    try {
      TrainingJobConfig config = config(kafka);
      kafka.createTopics(TrainingJob.topics(config, 2, (short) 1));
      Configuration conf = TrainingJob.flinkConfiguration(config);
      conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
      conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 20);
      conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofSeconds(1));
      StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
      env.setParallelism(config.parallelism);
      TrainingJob.build(env, config);

      long published;
      JobClient job;
      List<TrainingMetrics> seen = new ArrayList<>();
      try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties())) {
        publisher.publishTargets(config.targetsTopic(), corpus.targets, null);
        job = env.executeAsync("broker restart");
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!TopicReader.groupCaughtUp(kafka.clientProperties(), config.groupId, config.targetsTopic())) {
          check(job, deadline);
          Thread.sleep(200);
        }
        publisher.publishPairs(config.pairsTopic(), corpus.train, "e0", 0, null);
        published = corpus.train.size();
      }
      try {
        try (TopicReader<TrainingMetrics> metrics =
            new TopicReader<>(kafka.clientProperties(), config.metricsTopic(), TrainingMetrics.class)) {
          await(metrics, seen, job, published / config.batchSize / 2);
        }
        kafka = kafka.restart(Duration.ofSeconds(3));
        try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties());
            TopicReader<TrainingMetrics> metrics =
                new TopicReader<>(kafka.clientProperties(), config.metricsTopic(), TrainingMetrics.class)) {
          publisher.publishPairs(config.pairsTopic(), corpus.train, "e1", 0, null);
          published += corpus.train.size();
          long steps = published / config.batchSize;
          List<TrainingMetrics> all = new ArrayList<>();
          TrainingMetrics last = await(metrics, all, job, steps); // a new reader: reads the topic from the start
          all.addAll(metrics.poll(Duration.ofSeconds(1)));
          assertEquals(LongStream.rangeClosed(1, steps).boxed().toList(),
              all.stream().map(TrainingMetrics::getStep).toList(), "committed steps across the broker restart");
          assertEquals(steps * config.batchSize, last.getPairsTrained());
          assertEquals(corpus.targets.size(), last.getIndexTargets());
          List<String> trained = all.stream().flatMap(m -> m.getPairIds().stream()).sorted().toList();
          List<String> expected = java.util.stream.Stream.of("e0", "e1")
              .flatMap(pass -> corpus.train.stream().map(q -> q.queryId() + "#" + pass)).sorted().toList();
          assertEquals(expected, trained, "pairs lost or trained twice (audit by pair id)");
        }
      } finally {
        job.cancel().get();
      }
    } finally {
      kafka.close();
    }
  }

  private static TrainingMetrics await(
      TopicReader<TrainingMetrics> metrics, List<TrainingMetrics> seen, JobClient job, long step) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(150).toNanos();
    while (seen.isEmpty() || seen.get(seen.size() - 1).getStep() < step) {
      check(job, deadline);
      seen.addAll(metrics.poll(Duration.ofMillis(200)));
    }
    return seen.get(seen.size() - 1);
  }

  private static TrainingJobConfig config(EmbeddedKafkaBroker kafka) {
    TrainingJobConfig c = new TrainingJobConfig();
    c.bootstrapServers = kafka.bootstrapServers();
    c.topicPrefix = "restart.";
    c.groupId = "restart";
    c.checkpointDir = CLUSTER.workDir().resolve("checkpoints").toUri().toString();
    c.checkpointInterval = Duration.ofMillis(500);
    c.snapshotDir = CLUSTER.workDir().resolve("snapshots").toString();
    c.batchSize = 10;
    c.sampledNegatives = 8;
    c.uniformNegatives = 8;
    c.reencodeEvery = 6;
    c.landmarks = 8;
    c.regressionSamples = 32;
    c.buckets = 4096;
    c.embeddingDim = 32;
    c.hiddenDim = 64;
    c.outputDim = 32;
    c.warmupSteps = 5;
    return c.validate();
  }

  private static void check(JobClient job, long deadline) throws Exception {
    if (job.getJobStatus().get().isGloballyTerminalState()) {
      job.getJobExecutionResult().get();
      fail("the job ended");
    }
    if (System.nanoTime() > deadline) {
      fail("timed out");
    }
  }
}
