package io.dynnibal.stream;

/**
 * A Kafka record as it arrived, undecoded: the sources never fail on bad bytes; decoding happens in
 * the next operator, which can send what it cannot read to the dead-letter topic with its
 * coordinates.
 */
public class KafkaRecord {
  public String topic;
  public int partition;
  public long offset;
  public byte[] key;

  /** Null for a tombstone. */
  public byte[] value;

  public long timestamp;

  public KafkaRecord() {}

  public KafkaRecord(
      String topic, int partition, long offset, byte[] key, byte[] value, long timestamp) {
    this.topic = topic;
    this.partition = partition;
    this.offset = offset;
    this.key = key;
    this.value = value;
    this.timestamp = timestamp;
  }

  public String keyAsString() {
    return key == null ? null : new String(key, java.nio.charset.StandardCharsets.UTF_8);
  }
}
