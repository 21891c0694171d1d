package io.dynnibal.tests.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import io.dynnibal.jobs.embedded.EmbeddedKafkaBroker;
import io.dynnibal.jobs.kafka.CorpusPublisher;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.jobs.training.TrainingJob;
import io.dynnibal.jobs.training.TrainingJobConfig;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.tests.harness.StreamingClusterExtension;
import io.dynnibal.tests.training.SyntheticCorpus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Security passthrough: a broker whose only client listener requires SASL/PLAIN. The job's sources and sinks, and the
 * publisher, get the credentials from {@code kafka.*} settings and train; a client without them is refused; the
 * password appears neither in the printed configuration nor in the logs.
 */
class SaslPassthroughTest {
  @RegisterExtension
  static final StreamingClusterExtension CLUSTER = StreamingClusterExtension.withTaskManagers(1, 2);

  private static final String PASSWORD = "alice-s3cret-for-the-test";

  @Test
  @Timeout(180)
  void theJobTrainsAgainstASaslBrokerAndNeverLogsThePassword() throws Exception {
    SyntheticCorpus corpus = new SyntheticCorpus(60, 120, 8, 2, 29);
    try (EmbeddedKafkaBroker kafka = EmbeddedKafkaBroker.startWithSaslPlain(
        CLUSTER.workDir().resolve("sasl-kafka"), Map.of("alice", PASSWORD))) {
      TrainingJobConfig config = config(kafka);
      assertEquals("[redacted]", config.toProperties().get("kafka.sasl.jaas.config"));
      assertFalse(config.toProperties().toString().contains(PASSWORD));
      kafka.createTopics(TrainingJob.topics(config, 2, (short) 1));

      Properties anonymous = new Properties();
      anonymous.put("bootstrap.servers", kafka.bootstrapServers());
      try (Admin admin = Admin.create(anonymous)) {
        assertThrows(Exception.class, () -> admin.describeCluster(
            new DescribeClusterOptions().timeoutMs(3000)).nodes().get(), "a client without credentials got in");
      }

      Properties alice = config.clientProperties();
      Configuration conf = TrainingJob.flinkConfiguration(config);
      conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
      StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
      env.setParallelism(config.parallelism);
      TrainingJob.build(env, config);
      try (CorpusPublisher publisher = new CorpusPublisher(alice);
          TopicReader<TrainingMetrics> metrics = new TopicReader<>(alice, config.metricsTopic(), TrainingMetrics.class)) {
        publisher.publishTargets(config.targetsTopic(), corpus.targets, null);
        JobClient job = env.executeAsync("sasl passthrough");
        try {
          long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
          while (!TopicReader.groupCaughtUp(alice, config.groupId, config.targetsTopic())) {
            check(job, deadline);
            Thread.sleep(200);
          }
          publisher.publishPairs(config.pairsTopic(), corpus.train, "e0", 0, null);
          long steps = corpus.train.size() / config.batchSize;
          List<TrainingMetrics> seen = new ArrayList<>();
          while (seen.isEmpty() || seen.get(seen.size() - 1).getStep() < steps) {
            check(job, deadline);
            seen.addAll(metrics.poll(Duration.ofMillis(200)));
          }
          assertEquals(steps * config.batchSize, seen.get(seen.size() - 1).getPairsTrained());
        } finally {
          job.cancel().get();
        }
      }
    }
    Path log = Path.of("target", "e2e.log");
    if (Files.exists(log)) {
      assertFalse(Files.readString(log).contains(PASSWORD), "the password appears in " + log.toAbsolutePath());
    } else {
      fail("no e2e log at " + log.toAbsolutePath() + " to check");
    }
  }

  private static TrainingJobConfig config(EmbeddedKafkaBroker kafka) {
    TrainingJobConfig c = new TrainingJobConfig();
    c.bootstrapServers = kafka.bootstrapServers();
    c.apply("kafka.security.protocol", "SASL_PLAINTEXT");
    c.apply("kafka.sasl.mechanism", "PLAIN");
    c.apply("kafka.sasl.jaas.config", EmbeddedKafkaBroker.plainJaas("alice", PASSWORD));
    c.topicPrefix = "sasl.";
    c.groupId = "sasl";
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
