package io.dynnibal.jobs.kafka;

import io.dynnibal.schemas.RecordDecodingException;
import io.dynnibal.schemas.SingleObjectCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.avro.specific.SpecificRecordBase;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Follows a topic of Avro records from its beginning (or its last records), reading only committed
 * transactions (what the job's exactly-once sinks have really published): the demo's progress bar
 * and the tests read the metrics topic this way.
 */
public final class TopicReader<T extends SpecificRecordBase> implements AutoCloseable {
  private final KafkaConsumer<String, byte[]> consumer;
  private final SingleObjectCodec<T> codec;

  public TopicReader(Properties clientProperties, String topic, Class<T> type) {
    this(clientProperties, topic, type, -1);
  }

  /**
   * Reads from {@code last} records before the end of each partition (committed ones), or from the
   * beginning when {@code last < 0}, then follows. A topic that does not exist yet is read from its
   * beginning once it appears.
   */
  public static <T extends SpecificRecordBase> TopicReader<T> fromLast(
      Properties clientProperties, String topic, Class<T> type, int last) {
    return new TopicReader<>(clientProperties, topic, type, Math.max(0, last));
  }

  private TopicReader(Properties clientProperties, String topic, Class<T> type, int last) {
    Properties props = new Properties();
    props.putAll(clientProperties);
    props.put(ConsumerConfig.GROUP_ID_CONFIG, "dynnibal-reader-" + UUID.randomUUID());
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    consumer = new KafkaConsumer<>(props, new StringDeserializer(), new ByteArrayDeserializer());
    codec = SingleObjectCodec.of(type);
    List<TopicPartition> partitions =
        last < 0
            ? List.of()
            : consumer.partitionsFor(topic).stream()
                .map(p -> new TopicPartition(topic, p.partition()))
                .toList();
    if (partitions.isEmpty()) {
      consumer.subscribe(List.of(topic));
      return;
    }
    consumer.assign(partitions);
    Map<TopicPartition, Long> begin = consumer.beginningOffsets(partitions);
    Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
    for (TopicPartition p : partitions) {
      consumer.seek(p, Math.max(begin.get(p), end.get(p) - last));
    }
  }

  /** Records that arrived within {@code wait}; undecodable ones are skipped. */
  public List<T> poll(Duration wait) {
    List<T> out = new ArrayList<>();
    for (ConsumerRecord<String, byte[]> record : consumer.poll(wait)) {
      if (record.value() == null) {
        continue;
      }
      try {
        out.add(codec.decode(record.value()));
      } catch (RecordDecodingException e) {
        // not ours to judge here: the job dead-letters what it cannot read
      }
    }
    return out;
  }

  /**
   * Every record from here on, read until none has arrived for {@code quiet}: a topic that has
   * stopped growing, read to its end (what an audit reads).
   */
  public List<T> readUntilQuiet(Duration quiet) {
    List<T> all = new ArrayList<>();
    long quietSince = System.nanoTime();
    while (System.nanoTime() - quietSince < quiet.toNanos()) {
      List<T> polled = poll(Duration.ofMillis(300));
      if (!polled.isEmpty()) {
        quietSince = System.nanoTime();
        all.addAll(polled);
      }
    }
    return all;
  }

  /**
   * Whether a consumer group has committed offsets at the end of every partition of {@code topic}.
   * The job's Kafka source commits on checkpoint completion, so this means every record of the
   * topic went through a checkpoint.
   */
  public static boolean groupCaughtUp(Properties clientProperties, String group, String topic)
      throws Exception {
    try (Admin admin = Admin.create(clientProperties)) {
      Map<TopicPartition, OffsetAndMetadata> committed =
          admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
      for (var e : endOffsets(admin, topic).entrySet()) {
        OffsetAndMetadata c = committed.get(new TopicPartition(topic, e.getKey()));
        if (e.getValue() > 0 && (c == null || c.offset() < e.getValue())) {
          return false;
        }
      }
      return true;
    }
  }

  /**
   * Per partition, the offset after the last committed record (read_committed); empty when the
   * topic is missing.
   */
  public static Map<Integer, Long> endOffsets(Properties clientProperties, String topic)
      throws Exception {
    try (Admin admin = Admin.create(clientProperties)) {
      return endOffsets(admin, topic);
    }
  }

  private static Map<Integer, Long> endOffsets(Admin admin, String topic) throws Exception {
    var described = admin.describeTopics(List.of(topic)).allTopicNames();
    List<org.apache.kafka.common.TopicPartitionInfo> partitions;
    try {
      partitions = described.get().get(topic).partitions();
    } catch (java.util.concurrent.ExecutionException e) {
      if (e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException) {
        return Map.of();
      }
      throw e;
    }
    Map<TopicPartition, OffsetSpec> latest = new java.util.HashMap<>();
    for (var p : partitions) {
      latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest());
    }
    Map<Integer, Long> out = new java.util.TreeMap<>();
    var options =
        new org.apache.kafka.clients.admin.ListOffsetsOptions(
            org.apache.kafka.common.IsolationLevel.READ_COMMITTED);
    for (var e : admin.listOffsets(latest, options).all().get().entrySet()) {
      out.put(e.getKey().partition(), e.getValue().offset());
    }
    return out;
  }

  @Override
  public void close() {
    consumer.close();
  }
}
