package io.dynnibal.jobs.training;

import io.dynnibal.jobs.config.TrainingJobConfig;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * The job's Kafka topics: targets compacted (the latest text per id; a tombstone deletes), the
 * others append-only. The model-updates topic has one partition: updates must arrive in version
 * order.
 */
public final class JobTopics {
  private JobTopics() {}

  /** Every topic of the job, the partitioned ones with {@code partitions} partitions. */
  public static List<NewTopic> all(TrainingJobConfig config, int partitions, short replication) {
    return List.of(
        new NewTopic(config.targetsTopic(), partitions, replication)
            .configs(Map.of("cleanup.policy", "compact")),
        new NewTopic(config.pairsTopic(), partitions, replication),
        new NewTopic(config.modelUpdatesTopic(), 1, replication),
        new NewTopic(config.progressTopic(), 1, replication),
        new NewTopic(config.metricsTopic(), 1, replication),
        new NewTopic(config.deadLettersTopic(), 1, replication));
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
