package io.dynnibal.jobs.training;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.ingest.RawKafkaDeserializer;
import io.dynnibal.jobs.kafka.AvroValueSchema;
import io.dynnibal.jobs.kafka.DataLossException;
import io.dynnibal.jobs.kafka.LossCheckedSource;
import io.dynnibal.jobs.kafka.StrictOffsets;
import io.dynnibal.stream.KafkaRecord;
import java.util.Properties;
import org.apache.avro.specific.SpecificRecordBase;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * The job's Kafka sources and sinks. Sources hand on raw records (each stage decodes its own, with
 * dead letters) and read committed records only, so a transactional sink's output is seen once its
 * checkpoint completes; sinks write Avro values, transactionally where the guarantee is exactly
 * once, under a transactional id unique to the job's consumer group and the sink.
 */
final class KafkaEndpoints {
  private KafkaEndpoints() {}

  /**
   * A source of {@code topic}'s raw records, new splits from {@code start}, in the job's consumer
   * group. A split's offset is never reset: where its records are gone from the log the job fails
   * with a {@link DataLossException} ({@link StrictOffsets}, {@link LossCheckedSource}), unless
   * {@code accept.data.loss} lets the consumer reset to {@code start}'s end of the log as before.
   */
  static Source<KafkaRecord, ?, ?> source(
      TrainingJobConfig config, String topic, OffsetsInitializer start) {
    KafkaSource<KafkaRecord> source =
        KafkaSource.<KafkaRecord>builder()
            .setProperties(config.clientProperties())
            .setBootstrapServers(config.kafka.bootstrapServers)
            .setTopics(topic)
            .setGroupId(config.kafka.groupId)
            .setStartingOffsets(config.kafka.acceptDataLoss ? start : StrictOffsets.of(start))
            .setDeserializer(new RawKafkaDeserializer())
            .setProperty(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed")
            .build();
    return config.kafka.acceptDataLoss
        ? source
        : new LossCheckedSource<>(source, remedy(config, topic));
  }

  /** What keeps {@code topic}'s unread records from being removed, for the loss's message. */
  private static String remedy(TrainingJobConfig config, String topic) {
    if (topic.equals(config.targetsTopic())) {
      return "no deleteRecords on the compacted targets topic, and no time-based retention on it";
    }
    String setting =
        topic.equals(config.pairsTopic()) ? "topic.pairs.retention" : "topic.retention";
    return "a retention.ms on "
        + topic
        + " (set from "
        + setting
        + " when the job creates it) longer than the job may stay stopped or behind";
  }

  /** A sink of Avro {@code type} values to {@code topic}; {@code name} tells its transactions. */
  static <T extends SpecificRecordBase> KafkaSink<T> sink(
      TrainingJobConfig config,
      String topic,
      Class<T> type,
      String name,
      DeliveryGuarantee guarantee) {
    Properties producer = config.clientProperties();
    producer.put(
        ProducerConfig.TRANSACTION_TIMEOUT_CONFIG,
        String.valueOf(config.transactionTimeout().toMillis()));
    return KafkaSink.<T>builder()
        .setBootstrapServers(config.kafka.bootstrapServers)
        .setRecordSerializer(
            KafkaRecordSerializationSchema.builder()
                .setTopic(topic)
                .setValueSerializationSchema(AvroValueSchema.of(type))
                .build())
        .setDeliveryGuarantee(guarantee)
        .setTransactionalIdPrefix(config.kafka.topicPrefix + config.kafka.groupId + "-" + name)
        .setKafkaProducerConfig(producer)
        .build();
  }
}
