package io.dynnibal.schemas;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

class SingleObjectCodecTest {
  static final Iterable<Class<? extends SpecificRecord>> TOPIC_RECORDS =
      ReleasedSchemas.TOPIC_RECORDS;

  @ParameterizedTest
  @FieldSource("TOPIC_RECORDS")
  void roundTripKeepsEveryField(Class<? extends SpecificRecord> type) throws Exception {
    SpecificRecord record = SampleRecords.of(type);
    assertEquals(record, roundTrip(type, record));
  }

  @ParameterizedTest
  @FieldSource("TOPIC_RECORDS")
  void headerCarriesTheSchemaFingerprint(Class<? extends SpecificRecord> type) {
    byte[] bytes = encode(type, SampleRecords.of(type));
    assertEquals((byte) 0xC3, bytes[0]);
    assertEquals((byte) 0x01, bytes[1]);
    long written = ByteBuffer.wrap(bytes, 2, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong();
    assertEquals(ReleasedSchemas.fingerprint(SingleObjectCodec.of(type).schema()), written);
  }

  @Test
  void anotherDynnibalRecordIsNamedInTheError() {
    byte[] target = SingleObjectCodec.of(Target.class).encode(SampleRecords.target());
    RecordDecodingException e =
        assertThrows(
            RecordDecodingException.class,
            () -> SingleObjectCodec.of(TrainingPair.class).decode(target));
    assertTrue(e.getMessage().contains("expected a TrainingPair"), e.getMessage());
    assertTrue(e.getMessage().contains("a Target v1 record"), e.getMessage());
  }

  @Test
  void aForeignSchemaIsRejectedAsForeign() {
    Schema foreign =
        SchemaBuilder.record("Click")
            .namespace("com.example")
            .fields()
            .requiredString("pair_id")
            .requiredLong("ts")
            .endRecord();
    GenericRecord click = new GenericData.Record(foreign);
    click.put("pair_id", "x");
    click.put("ts", 1L);
    byte[] bytes = encodeGeneric(foreign, click);
    RecordDecodingException e =
        assertThrows(
            RecordDecodingException.class,
            () -> SingleObjectCodec.of(TrainingPair.class).decode(bytes));
    assertTrue(e.getMessage().contains("no dynnibal release knows"), e.getMessage());
  }

  @Test
  void bytesWithoutTheMarkerAreRejected() {
    byte[] json = "{\"pair_id\": \"x\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    RecordDecodingException e =
        assertThrows(
            RecordDecodingException.class,
            () -> SingleObjectCodec.of(TrainingPair.class).decode(json));
    assertTrue(e.getMessage().contains("single-object encoding"), e.getMessage());
  }

  @Test
  void nullAndTooShortValuesAreRejected() {
    SingleObjectCodec<TrainingPair> codec = SingleObjectCodec.of(TrainingPair.class);
    assertThrows(RecordDecodingException.class, () -> codec.decode(null));
    assertThrows(RecordDecodingException.class, () -> codec.decode(new byte[0]));
    assertThrows(
        RecordDecodingException.class, () -> codec.decode(new byte[] {(byte) 0xC3, 0x01, 1, 2}));
  }

  @Test
  void everyTruncationOfAValidRecordIsRejectedAsMalformed() {
    SingleObjectCodec<TrainingPair> codec = SingleObjectCodec.of(TrainingPair.class);
    byte[] bytes = codec.encode(SampleRecords.pair());
    for (int length = 10; length < bytes.length; length++) {
      byte[] cut = Arrays.copyOf(bytes, length);
      RecordDecodingException e =
          assertThrows(RecordDecodingException.class, () -> codec.decode(cut));
      assertTrue(e.getMessage().contains("malformed or truncated"), length + ": " + e.getMessage());
    }
  }

  @Test
  void randomBodiesNeverEscapeAsAnotherException() {
    SingleObjectCodec<TrainingPair> codec = SingleObjectCodec.of(TrainingPair.class);
    byte[] valid = codec.encode(SampleRecords.pair());
    Random random = new Random(20261125L);
    for (int trial = 0; trial < 300; trial++) {
      byte[] bytes = Arrays.copyOf(valid, 10 + random.nextInt(64));
      for (int i = 10; i < bytes.length; i++) {
        bytes[i] = (byte) random.nextInt(256);
      }
      try {
        codec.decode(bytes);
      } catch (RecordDecodingException expected) {
        // A clear rejection is fine; anything else (a RuntimeException, an OutOfMemoryError) is
        // not.
      }
    }
  }

  @Test
  void survivesJavaSerializationAsFlinkShipsIt() throws Exception {
    SingleObjectCodec<TrainingPair> codec = SingleObjectCodec.of(TrainingPair.class);
    byte[] bytes = codec.encode(SampleRecords.pair());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ObjectOutputStream objects = new ObjectOutputStream(out)) {
      objects.writeObject(codec);
    }
    @SuppressWarnings("unchecked")
    SingleObjectCodec<TrainingPair> copy =
        (SingleObjectCodec<TrainingPair>)
            new ObjectInputStream(new ByteArrayInputStream(out.toByteArray())).readObject();
    assertEquals(SampleRecords.pair(), copy.decode(bytes));
    assertArrayEquals(bytes, copy.encode(SampleRecords.pair()));
  }

  @SuppressWarnings("unchecked")
  private static <T extends SpecificRecord> byte[] encode(Class<T> type, SpecificRecord record) {
    return SingleObjectCodec.of(type).encode((T) record);
  }

  private static <T extends SpecificRecord> T roundTrip(Class<T> type, SpecificRecord record)
      throws Exception {
    SingleObjectCodec<T> codec = SingleObjectCodec.of(type);
    return codec.decode(encode(type, record));
  }

  static byte[] encodeGeneric(Schema schema, GenericRecord record) {
    try {
      ByteBuffer buffer =
          new BinaryMessageEncoder<GenericRecord>(GenericData.get(), schema).encode(record);
      byte[] bytes = new byte[buffer.remaining()];
      buffer.get(bytes);
      return bytes;
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
