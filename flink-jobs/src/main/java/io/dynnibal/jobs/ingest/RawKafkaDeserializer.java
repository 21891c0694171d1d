package io.dynnibal.jobs.ingest;

import io.dynnibal.stream.KafkaRecord;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** Passes every record on undecoded, so that no value, however malformed, can fail a source. */
public final class RawKafkaDeserializer implements KafkaRecordDeserializationSchema<KafkaRecord> {
  private static final long serialVersionUID = 1L;

  @Override
  public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<KafkaRecord> out) {
    out.collect(
        new KafkaRecord(
            record.topic(),
            record.partition(),
            record.offset(),
            record.key(),
            record.value(),
            record.timestamp()));
  }

  @Override
  public TypeInformation<KafkaRecord> getProducedType() {
    return TypeInformation.of(KafkaRecord.class);
  }
}
