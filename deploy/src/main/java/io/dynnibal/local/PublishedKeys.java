package io.dynnibal.local;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The keys of every committed record a topic holds now, read from its beginning to its end offsets
 * as they were when the read began (what {@code publish} checks so that sending a file twice sends
 * each pair once). A topic that does not exist holds none.
 */
public final class PublishedKeys {
  private static final Duration POLL = Duration.ofMillis(500);

  private PublishedKeys() {}

  public static Set<String> of(Properties clientProperties, String topic) {
    Properties props = new Properties();
    props.putAll(clientProperties);
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    props.remove(ConsumerConfig.GROUP_ID_CONFIG);
    Set<String> keys = new HashSet<>();
    try (KafkaConsumer<String, byte[]> consumer =
        new KafkaConsumer<>(props, new StringDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> partitions =
          consumer.listTopics().getOrDefault(topic, List.of()).stream()
              .map(p -> new TopicPartition(topic, p.partition()))
              .toList();
      if (partitions.isEmpty()) {
        return keys;
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      while (partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
        for (ConsumerRecord<String, byte[]> r : consumer.poll(POLL)) {
          if (r.offset() < end.get(new TopicPartition(r.topic(), r.partition()))
              && r.key() != null) {
            keys.add(r.key());
          }
        }
      }
    }
    return keys;
  }
}
