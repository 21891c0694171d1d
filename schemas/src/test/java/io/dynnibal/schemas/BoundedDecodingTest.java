package io.dynnibal.schemas;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * A value that declares a huge string or collection is refused before Avro allocates it: the decode
 * fails as malformed (so the job dead-letters it) and this thread allocates far less than the
 * declared length. The bound is the value's own size (a declared length beyond the bytes left is
 * refused), not only the JVM-wide limits of {@link AvroTrust}; a value above {@link
 * SingleObjectCodec#MAX_RECORD_BYTES} is not decoded at all.
 */
class BoundedDecodingTest {
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  /** Avro's long encoding: zig-zag, then 7 bits a byte, low bits first. */
  private static void writeLong(ByteArrayOutputStream out, long n) {
    long v = (n << 1) ^ (n >> 63);
    while ((v & ~0x7FL) != 0) {
      out.write((int) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    out.write((int) v);
  }

  /** The single-object header of {@code type}'s current schema, then {@code body}. */
  private static <T extends org.apache.avro.specific.SpecificRecord> byte[] value(
      SingleObjectCodec<T> codec, T sample, byte[] body) {
    byte[] header = Arrays.copyOf(codec.encode(sample), 10);
    byte[] out = Arrays.copyOf(header, header.length + body.length);
    System.arraycopy(body, 0, out, header.length, body.length);
    return out;
  }

  private static long allocatedWhile(Runnable action) {
    long id = Thread.currentThread().getId();
    long before = THREADS.getThreadAllocatedBytes(id);
    action.run();
    return THREADS.getThreadAllocatedBytes(id) - before;
  }

  @Test
  void aHugeDeclaredStringIsRefusedWithoutAllocatingIt() {
    SingleObjectCodec<Target> codec = SingleObjectCodec.of(Target.class);
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    writeLong(body, 1_500_000_000L); // target_id claims 1.5 GB
    body.writeBytes("abc".getBytes(StandardCharsets.UTF_8));
    byte[] hostile = value(codec, new Target("a", "b"), body.toByteArray());
    RecordDecodingException[] refused = new RecordDecodingException[1];
    long allocated =
        allocatedWhile(
            () ->
                refused[0] =
                    assertThrows(RecordDecodingException.class, () -> codec.decode(hostile)));
    assertTrue(refused[0].getMessage().contains("malformed"), refused[0].getMessage());
    assertTrue(allocated < 1L << 20, "allocated " + allocated + " bytes for a 1.5 GB claim");
  }

  /**
   * The brief's hostile pair: the header, then a pair_id that claims 2^31-1 bytes in a 5-byte
   * varint and nothing after it (15 bytes in all). Dead-lettered with a reason that says so.
   */
  @Test
  void aTinyValueClaimingTwoGigabytesIsRefusedWithItsReason() {
    SingleObjectCodec<TrainingPair> codec = SingleObjectCodec.of(TrainingPair.class);
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    writeLong(body, Integer.MAX_VALUE);
    byte[] hostile = value(codec, SampleRecords.pair(), body.toByteArray());
    assertEquals(15, hostile.length);
    RecordDecodingException[] refused = new RecordDecodingException[1];
    long allocated =
        allocatedWhile(
            () ->
                refused[0] =
                    assertThrows(RecordDecodingException.class, () -> codec.decode(hostile)));
    String reason = refused[0].getMessage();
    assertTrue(
        reason.contains("malformed")
            && reason.contains("a length it declares exceeds what is left of it"),
        reason);
    assertTrue(allocated < 1L << 20, "allocated " + allocated + " bytes for a 2 GB claim");
  }

  /**
   * Below every JVM-wide limit, a declared length is still checked against the bytes left: the
   * guard does not depend on -Dorg.apache.avro.limits.* or on when Avro read them.
   */
  @Test
  void aDeclaredLengthBeyondTheValueIsRefusedBelowTheJvmLimits() {
    SingleObjectCodec<Target> codec = SingleObjectCodec.of(Target.class);
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    writeLong(body, 1000); // target_id claims 1000 bytes (the string limit is 4 MiB)
    body.writeBytes("abc".getBytes(StandardCharsets.UTF_8));
    byte[] hostile = value(codec, new Target("a", "b"), body.toByteArray());
    RecordDecodingException refused =
        assertThrows(RecordDecodingException.class, () -> codec.decode(hostile));
    assertTrue(
        refused.getMessage().contains("a length it declares exceeds what is left of it")
            && refused.getMessage().contains("1000 bytes, but only 3"),
        refused.getMessage());

    SingleObjectCodec<ModelUpdate> updates = SingleObjectCodec.of(ModelUpdate.class);
    ByteArrayOutputStream update = new ByteArrayOutputStream();
    writeLong(update, 3); // version
    writeLong(update, 300); // step
    writeLong(update, 1);
    update.write('s'); // snapshot_uri "s"
    writeLong(update, 100); // landmark_ids claims 100 strings, with 2 bytes left
    update.write(2);
    update.write('x');
    byte[] shortCollection = value(updates, SampleRecords.modelUpdate(), update.toByteArray());
    RecordDecodingException collection =
        assertThrows(RecordDecodingException.class, () -> updates.decode(shortCollection));
    assertTrue(collection.getMessage().contains("claims 100 elements"), collection.getMessage());
  }

  @Test
  void aValueAboveTheRecordLimitIsNotDecoded() {
    SingleObjectCodec<Target> codec = SingleObjectCodec.of(Target.class);
    byte[] header = Arrays.copyOf(codec.encode(new Target("a", "b")), 10);
    byte[] huge = Arrays.copyOf(header, SingleObjectCodec.MAX_RECORD_BYTES + 1);
    RecordDecodingException refused =
        assertThrows(RecordDecodingException.class, () -> codec.decode(huge));
    assertTrue(
        refused.getMessage().contains("exceeds the limit of " + SingleObjectCodec.MAX_RECORD_BYTES),
        refused.getMessage());
  }

  @Test
  void aHugeDeclaredCollectionIsRefusedWithoutAllocatingIt() {
    SingleObjectCodec<ModelUpdate> codec = SingleObjectCodec.of(ModelUpdate.class);
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    writeLong(body, 3); // version
    writeLong(body, 300); // step
    writeLong(body, 1);
    body.write('s'); // snapshot_uri "s"
    writeLong(body, 1_000_000_000L); // landmark_ids claims a billion items
    byte[] hostile = value(codec, SampleRecords.modelUpdate(), body.toByteArray());
    long allocated =
        allocatedWhile(
            () -> assertThrows(RecordDecodingException.class, () -> codec.decode(hostile)));
    assertTrue(allocated < 1L << 20, "allocated " + allocated + " bytes for a billion items");
  }

  @Test
  void recordsWithinTheLimitsStillDecode() throws RecordDecodingException {
    SingleObjectCodec<Target> codec = SingleObjectCodec.of(Target.class);
    String text = "x".repeat(1 << 20);
    assertEquals(text, codec.decode(codec.encode(new Target("big", text))).getText());
  }
}
