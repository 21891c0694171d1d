package io.dynnibal.jobs.kafka;

import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;

/**
 * What a restore checks a topic against, as the broker tells it now: the topic's id (Kafka gives a
 * topic a new one when it is created again under the same name) and, for a compacted topic, how
 * long it keeps deletes.
 *
 * @param deleteRetentionMs the topic's {@code delete.retention.ms}; -1 where the topic is not
 *     compacted
 */
public record TopicFacts(String topic, String id, long deleteRetentionMs) {
  /** The topic as the brokers at {@code client}'s bootstrap servers describe it. */
  public static TopicFacts describe(Properties client, String topic) throws InterruptedException {
    Properties admin = new Properties();
    admin.putAll(client);
    admin.putIfAbsent(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
    try (Admin kafka = Admin.create(admin)) {
      String id =
          kafka
              .describeTopics(List.of(topic))
              .allTopicNames()
              .get()
              .get(topic)
              .topicId()
              .toString();
      ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
      Config config = kafka.describeConfigs(List.of(resource)).all().get().get(resource);
      ConfigEntry policy = config.get(TopicConfig.CLEANUP_POLICY_CONFIG);
      boolean compacted =
          policy != null && policy.value().contains(TopicConfig.CLEANUP_POLICY_COMPACT);
      ConfigEntry deletes = config.get(TopicConfig.DELETE_RETENTION_MS_CONFIG);
      long deleteRetention = compacted && deletes != null ? Long.parseLong(deletes.value()) : -1;
      return new TopicFacts(topic, id, deleteRetention);
    } catch (ExecutionException e) {
      throw new IllegalStateException(
          "cannot describe topic "
              + topic
              + " on Kafka at "
              + client.get("bootstrap.servers")
              + ": "
              + e.getCause().getMessage(),
          e.getCause());
    }
  }
}
