package io.dynnibal.stream;

import io.dynnibal.schemas.DeadLetter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.flink.formats.avro.typeutils.AvroTypeInfo;
import org.apache.flink.util.OutputTag;

/** The side output every operator sends what it cannot use to, and how a dead letter is made. */
public final class DeadLetters {
  public static final OutputTag<DeadLetter> TAG =
      new OutputTag<>("dead-letters", new AvroTypeInfo<>(DeadLetter.class));

  private DeadLetters() {}

  public static DeadLetter of(KafkaRecord record, Throwable error, String stage) {
    return of(record, error.getClass().getName(), String.valueOf(error.getMessage()), stage);
  }

  public static DeadLetter of(KafkaRecord record, String errorClass, String message, String stage) {
    return DeadLetter.newBuilder()
        .setSourceTopic(record.topic)
        .setPartition(record.partition)
        .setOffset(record.offset)
        .setKey(record.key == null ? null : ByteBuffer.wrap(record.key))
        .setPayload(record.value == null ? null : ByteBuffer.wrap(record.value))
        .setErrorClass(errorClass)
        .setMessage(message)
        .setStage(stage)
        .setTimeMs(System.currentTimeMillis())
        .build();
  }

  /**
   * A dead letter for something found unusable after decoding (a pair, a target's encoding, a model
   * update, a batch): no Kafka coordinates survive this far, so the record is named by its key.
   */
  public static DeadLetter ofDecoded(String topic, String key, String message, String stage) {
    return DeadLetter.newBuilder()
        .setSourceTopic(topic)
        .setPartition(-1)
        .setOffset(-1)
        .setKey(ByteBuffer.wrap(key.getBytes(StandardCharsets.UTF_8)))
        .setPayload(null)
        .setErrorClass("io.dynnibal.UnusableRecord")
        .setMessage(message)
        .setStage(stage)
        .setTimeMs(System.currentTimeMillis())
        .build();
  }
}
