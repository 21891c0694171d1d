package io.dynnibal.jobs.training;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.ingest.RawKafkaDeserializer;
import io.dynnibal.jobs.kafka.AvroValueSchema;
import io.dynnibal.stream.KafkaRecord;
import java.util.Properties;
import org.apache.avro.specific.SpecificRecordBase;
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

  /** A source of {@code topic}'s raw records from {@code start}, in the job's consumer group. */
  static KafkaSource<KafkaRecord> source(
      TrainingJobConfig config, String topic, OffsetsInitializer start) {
    return KafkaSource.<KafkaRecord>builder()
        .setProperties(config.clientProperties())
        .setBootstrapServers(config.kafka.bootstrapServers)
        .setTopics(topic)
        .setGroupId(config.kafka.groupId)
        .setStartingOffsets(start)
        .setDeserializer(new RawKafkaDeserializer())
        .setProperty(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed")
        .build();
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
