package io.dynnibal.stream;

import io.dynnibal.schemas.DeadLetter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.flink.formats.avro.typeutils.AvroTypeInfo;
import org.apache.flink.util.OutputTag;

/**
 * The side output every operator sends what it cannot use to, and how a dead letter is made.
 *
 * <p>Invariant: a dead letter is at most about 300 KB whatever it carries, well under Kafka's 1 MiB
 * default record limit, so writing it can never fail for its size (a letter over the limit would
 * fail its sink, and the task would restore and read the same record again, forever). Of the
 * original key it keeps the first {@value #MAX_KEY_BYTES} bytes, of the value the first {@value
 * #MAX_PAYLOAD_BYTES}, recording the original sizes ({@code key_size}, {@code payload_size}) when
 * it cut; a message keeps its first {@value #MAX_MESSAGE_CHARS} characters and says how long it
 * was.
 */
public final class DeadLetters {
  public static final OutputTag<DeadLetter> TAG =
      new OutputTag<>("dead-letters", new AvroTypeInfo<>(DeadLetter.class));

  public static final int MAX_KEY_BYTES = 16 * 1024;
  public static final int MAX_PAYLOAD_BYTES = 256 * 1024;
  public static final int MAX_MESSAGE_CHARS = 4096;
  private static final int QUOTED_CHARS = 256;

  private DeadLetters() {}

  public static DeadLetter of(KafkaRecord record, Throwable error, String stage) {
    return of(record, error.getClass().getName(), String.valueOf(error.getMessage()), stage);
  }

  public static DeadLetter of(KafkaRecord record, String errorClass, String message, String stage) {
    return DeadLetter.newBuilder()
        .setSourceTopic(record.topic)
        .setPartition(record.partition)
        .setOffset(record.offset)
        .setKey(start(record.key, MAX_KEY_BYTES))
        .setKeySize(sizeIfCut(record.key, MAX_KEY_BYTES))
        .setPayload(start(record.value, MAX_PAYLOAD_BYTES))
        .setPayloadSize(sizeIfCut(record.value, MAX_PAYLOAD_BYTES))
        .setErrorClass(errorClass)
        .setMessage(bounded(message))
        .setStage(stage)
        .setTimeMs(System.currentTimeMillis())
        .build();
  }

  /**
   * A dead letter for something found unusable after decoding (a pair, a target's encoding, a model
   * update, a batch): no Kafka coordinates survive this far, so the record is named by its key.
   */
  public static DeadLetter ofDecoded(String topic, String key, String message, String stage) {
    byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
    return DeadLetter.newBuilder()
        .setSourceTopic(topic)
        .setPartition(-1)
        .setOffset(-1)
        .setKey(start(bytes, MAX_KEY_BYTES))
        .setKeySize(sizeIfCut(bytes, MAX_KEY_BYTES))
        .setPayload(null)
        .setErrorClass("io.dynnibal.UnusableRecord")
        .setMessage(bounded(message))
        .setStage(stage)
        .setTimeMs(System.currentTimeMillis())
        .build();
  }

  /**
   * {@code value} in quotes for a message, or, when longer than {@value #QUOTED_CHARS} characters,
   * its start and its length: a message names what it refuses without carrying it (the dead letter
   * carries the record).
   */
  public static String quoted(String value) {
    if (value.length() <= QUOTED_CHARS) {
      return "\"" + value + "\"";
    }
    int end = QUOTED_CHARS / 2;
    if (Character.isHighSurrogate(value.charAt(end - 1))) {
      end--;
    }
    return "\""
        + value.substring(0, end)
        + "...\" ("
        + String.format("%,d", value.length())
        + " characters)";
  }

  /** The first {@code max} bytes (all of them when there are fewer); null for null. */
  private static ByteBuffer start(byte[] bytes, int max) {
    return bytes == null ? null : ByteBuffer.wrap(bytes, 0, Math.min(bytes.length, max)).slice();
  }

  /** The original size when {@link #start} cut it, else null. */
  private static Integer sizeIfCut(byte[] bytes, int max) {
    return bytes != null && bytes.length > max ? bytes.length : null;
  }

  /** The message, or its start and how long it was. */
  static String bounded(String message) {
    if (message.length() <= MAX_MESSAGE_CHARS) {
      return message;
    }
    int end =
        Character.isHighSurrogate(message.charAt(MAX_MESSAGE_CHARS - 1))
            ? MAX_MESSAGE_CHARS - 1
            : MAX_MESSAGE_CHARS;
    return message.substring(0, end)
        + "... (cut: "
        + String.format("%,d", message.length())
        + " characters)";
  }
}
