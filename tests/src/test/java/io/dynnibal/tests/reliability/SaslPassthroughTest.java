package io.dynnibal.tests.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.tests.harness.SecretsAtRest;
import io.dynnibal.tests.harness.StreamingClusterExtension;
import io.dynnibal.tests.harness.TrainingJobs;
import io.dynnibal.tests.training.SyntheticCorpus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Map;
import java.util.Properties;
import org.apache.flink.core.execution.JobClient;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Security passthrough: a broker whose only client listener requires SASL/PLAIN. The job's sources
 * and sinks, and the publisher, get the credentials from {@code kafka.*} settings (the JAAS config
 * by reference, from a file Kafka's FileConfigProvider reads) and train; a client without them is
 * refused; the password appears neither in the printed configuration nor in the logs.
 */
class SaslPassthroughTest {
  @RegisterExtension
  static final StreamingClusterExtension CLUSTER = StreamingClusterExtension.withTaskManagers(1, 2);

  private static final String PASSWORD = "alice-s3cret-for-the-test";

  @Test
  @Timeout(180)
  void theJobTrainsAgainstASaslBrokerAndNeverLogsThePassword() throws Exception {
    SyntheticCorpus corpus = new SyntheticCorpus(60, 120, 8, 2, 29);
    try (EmbeddedKafkaBroker kafka =
        EmbeddedKafkaBroker.startWithSaslPlain(
            CLUSTER.workDir().resolve("sasl-kafka"), Map.of("alice", PASSWORD))) {
      TrainingJobConfig config = TrainingJobs.smallConfig(kafka, CLUSTER.workDir(), "sasl");
      config.apply("kafka.security.protocol", "SASL_PLAINTEXT");
      config.apply("kafka.sasl.mechanism", "PLAIN");
      Files.createDirectories(CLUSTER.workDir());
      SecretsAtRest.byReference(
              CLUSTER.workDir().resolve("sasl-secrets.properties"),
              Map.of("sasl.jaas.config", EmbeddedKafkaBroker.plainJaas("alice", PASSWORD)))
          .forEach((k, v) -> config.apply("kafka." + k, v));
      config.validate();
      assertTrue(
          config.toProperties().get("kafka.sasl.jaas.config").startsWith("${file:"),
          "the JAAS config is a reference");
      assertFalse(config.toProperties().toString().contains(PASSWORD));
      kafka.createTopics(JobTopics.all(config, 2, (short) 1));

      Properties anonymous = new Properties();
      anonymous.put("bootstrap.servers", kafka.bootstrapServers());
      try (Admin admin = Admin.create(anonymous)) {
        assertThrows(
            Exception.class,
            () -> admin.describeCluster(new DescribeClusterOptions().timeoutMs(3000)).nodes().get(),
            "a client without credentials got in");
      }

      Properties alice = config.clientProperties();
      try (CorpusPublisher publisher = new CorpusPublisher(alice);
          TopicReader<TrainingMetrics> metrics =
              new TopicReader<>(alice, config.metricsTopic(), TrainingMetrics.class)) {
        publisher.publishTargets(config.targetsTopic(), corpus.targets, null);
        JobClient job = TrainingJobs.start(config);
        try {
          TrainingJobs.awaitTargetsIndexed(alice, config, job);
          publisher.publishPairs(config.pairsTopic(), corpus.train, "e0", 0, null);
          long steps = corpus.train.size() / config.training.batchSize;
          TrainingMetrics last = TrainingJobs.awaitStep(metrics, new ArrayList<>(), job, steps);
          assertEquals(steps * config.training.batchSize, last.getPairsTrained());
        } finally {
          job.cancel().get();
        }
      }
    }
    Path log = Path.of("target", "e2e.log");
    if (Files.exists(log)) {
      assertFalse(
          Files.readString(log).contains(PASSWORD),
          "the password appears in " + log.toAbsolutePath());
    } else {
      fail("no e2e log at " + log.toAbsolutePath() + " to check");
    }
  }
}
