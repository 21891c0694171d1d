package io.dynnibal.jobs.training;

import io.dynnibal.jobs.config.TrainingJobConfig;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.TopicConfig;

/**
 * The job's Kafka topics: targets compacted (the latest text per id; a tombstone deletes), the
 * others append-only. The model-updates topic has one partition: updates must arrive in version
 * order. Each is created with its retention set, never the broker's default: the pairs and the
 * other append-only topics keep records for {@code topic.pairs.retention} and {@code
 * topic.retention} ({@code retention.ms}), the targets topic keeps deletes for {@code
 * topic.targets.delete.retention} ({@code delete.retention.ms}); a restore that would need records
 * these have removed fails (see {@code LossCheckedSource} and {@code TopicCheck}). Topics that
 * exist already keep their settings.
 */
public final class JobTopics {
  private JobTopics() {}

  /** Every topic of the job, the partitioned ones with {@code partitions} partitions. */
  public static List<NewTopic> all(TrainingJobConfig config, int partitions, short replication) {
    Map<String, String> kept = retention(config.kafka.topicRetention);
    return List.of(
        new NewTopic(config.targetsTopic(), partitions, replication)
            .configs(
                Map.of(
                    TopicConfig.CLEANUP_POLICY_CONFIG,
                    TopicConfig.CLEANUP_POLICY_COMPACT,
                    TopicConfig.DELETE_RETENTION_MS_CONFIG,
                    String.valueOf(config.kafka.topicTargetsDeleteRetention.toMillis()))),
        new NewTopic(config.pairsTopic(), partitions, replication)
            .configs(retention(config.kafka.topicPairsRetention)),
        new NewTopic(config.modelUpdatesTopic(), 1, replication).configs(kept),
        new NewTopic(config.progressTopic(), 1, replication).configs(kept),
        new NewTopic(config.metricsTopic(), 1, replication).configs(kept),
        new NewTopic(config.deadLettersTopic(), 1, replication).configs(kept));
  }

  private static Map<String, String> retention(Duration keep) {
    return Map.of(
        TopicConfig.CLEANUP_POLICY_CONFIG,
        TopicConfig.CLEANUP_POLICY_DELETE,
        TopicConfig.RETENTION_MS_CONFIG,
        String.valueOf(keep.toMillis()));
  }

  /**
   * Creates those of {@link #all} that do not exist yet; returns their names.
   *
   * @throws IllegalStateException naming the bootstrap servers when Kafka does not answer within 30
   *     s
   */
  public static List<String> createMissing(
      Properties client, TrainingJobConfig config, int partitions, short replication)
      throws InterruptedException {
    Properties admin = new Properties();
    admin.putAll(client);
    admin.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
    try (Admin kafka = Admin.create(admin)) {
      Set<String> existing = kafka.listTopics().names().get();
      List<NewTopic> missing =
          all(config, partitions, replication).stream()
              .filter(t -> !existing.contains(t.name()))
              .toList();
      kafka.createTopics(missing).all().get();
      return missing.stream().map(NewTopic::name).toList();
    } catch (ExecutionException e) {
      throw new IllegalStateException(
          "cannot create the job's topics on Kafka at "
              + client.get("bootstrap.servers")
              + " (bootstrap.servers): "
              + e.getCause().getMessage(),
          e.getCause());
    }
  }
}
