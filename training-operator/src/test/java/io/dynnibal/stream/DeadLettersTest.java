package io.dynnibal.stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.schemas.DeadLetter;
import io.dynnibal.schemas.SingleObjectCodec;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** What a dead letter keeps of what it reports, and that it always fits a Kafka record. */
class DeadLettersTest {
  private static final int KAFKA_DEFAULT_RECORD_LIMIT = 1024 * 1024;

  private static byte[] bytes(int n, byte b) {
    byte[] out = new byte[n];
    Arrays.fill(out, b);
    return out;
  }

  private static byte[] content(ByteBuffer buffer) {
    byte[] out = new byte[buffer.remaining()];
    buffer.duplicate().get(out);
    return out;
  }

  @Test
  void aSmallRecordIsKeptWhole() {
    KafkaRecord record =
        new KafkaRecord("pairs", 0, 7, bytes(10, (byte) 'k'), bytes(20, (byte) 1), 0);
    DeadLetter d = DeadLetters.of(record, "E", "why", "decode-pairs");
    assertArrayEquals(record.key, content(d.getKey()));
    assertArrayEquals(record.value, content(d.getPayload()));
    assertNull(d.getKeySize());
    assertNull(d.getPayloadSize());
    assertEquals("why", d.getMessage());
  }

  @Test
  void aRecordAtKafkasLimitQuotedInFullInItsMessageStillFitsOne() {
    // A key and a value that together fill a record, and a message that quotes both.
    byte[] key = bytes(400_000, (byte) 'k');
    byte[] value = bytes(600_000, (byte) 'v');
    String message = "key \"" + "k".repeat(400_000) + "\" differs from \"" + "v".repeat(600_000);
    DeadLetter d =
        DeadLetters.of(new KafkaRecord("targets", 1, 9, key, value, 0), "E", message, "stage");
    assertEquals(DeadLetters.MAX_KEY_BYTES, d.getKey().remaining());
    assertEquals(DeadLetters.MAX_PAYLOAD_BYTES, d.getPayload().remaining());
    assertEquals(400_000, d.getKeySize());
    assertEquals(600_000, d.getPayloadSize());
    assertTrue(d.getMessage().startsWith("key \"kkk"), d.getMessage().substring(0, 20));
    assertTrue(d.getMessage().endsWith("(cut: 1,000,021 characters)"), d.getMessage());
    int encoded = SingleObjectCodec.of(DeadLetter.class).encode(d).length;
    assertTrue(encoded < KAFKA_DEFAULT_RECORD_LIMIT / 3, encoded + " bytes");

    DeadLetter decoded = DeadLetters.ofDecoded("pairs", "p".repeat(700_000), message, "trainer");
    assertEquals(DeadLetters.MAX_KEY_BYTES, decoded.getKey().remaining());
    assertEquals(700_000, decoded.getKeySize());
    assertTrue(SingleObjectCodec.of(DeadLetter.class).encode(decoded).length < 300_000);
  }

  @Test
  void aMessageIsNotCutInsideACharacter() {
    String message = "x".repeat(DeadLetters.MAX_MESSAGE_CHARS - 1) + "\uD83D\uDE00" + "tail";
    String bounded = DeadLetters.bounded(message);
    assertEquals(
        "x".repeat(DeadLetters.MAX_MESSAGE_CHARS - 1),
        bounded.substring(0, bounded.indexOf("...")));
  }

  @Test
  void aLongValueIsQuotedByItsStartAndLength() {
    assertEquals("\"zsh\"", DeadLetters.quoted("zsh"));
    String quoted = DeadLetters.quoted("k".repeat(300_000));
    assertEquals("\"" + "k".repeat(128) + "...\" (300,000 characters)", quoted);
  }
}
