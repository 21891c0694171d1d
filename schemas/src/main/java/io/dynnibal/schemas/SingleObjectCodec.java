package io.dynnibal.schemas;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DatumReader;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificRecord;

/**
 * Encodes and decodes one record type in Avro's single-object encoding: the marker {@code C3 01},
 * the 8-byte little-endian CRC-64 fingerprint of the writer's schema, then the Avro binary body.
 * Every Kafka value of the project is written this way, so a reader can tell a foreign or wrong
 * record from a malformed one and say which.
 *
 * <p>Decoding is bounded by the value's own size, whatever the JVM's Avro settings: a value longer
 * than {@link #MAX_RECORD_BYTES} is refused before Avro reads it, and the body is decoded from the
 * byte array itself, where Avro 1.12.2 checks every declared string, bytes, array and map length
 * against the bytes left in the value before it allocates (a hostile value of a few bytes cannot
 * declare a 2 GB string). {@link AvroTrust}'s JVM-wide limits come on top.
 *
 * <p>Thread-safe and serializable (Flink ships it inside functions); the Avro encoder and readers
 * are rebuilt lazily after deserialization.
 */
public final class SingleObjectCodec<T extends SpecificRecord> implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final int HEADER_BYTES = 10;

  /**
   * The largest value decoded: 64 MiB, far above any record the job writes (a model update of 256
   * landmarks at d = 384 is under 1 MB) and above Kafka's default 1 MB message limit.
   */
  public static final int MAX_RECORD_BYTES = 64 << 20;

  private static final byte MARKER_0 = (byte) 0xC3;
  private static final byte MARKER_1 = (byte) 0x01;

  private final Class<T> type;
  private transient volatile BinaryMessageEncoder<T> encoder;

  /** A reader per released writer schema of this record, by schema fingerprint. */
  private transient volatile Map<Long, DatumReader<T>> readers;

  private SingleObjectCodec(Class<T> type) {
    this.type = type;
  }

  public static <T extends SpecificRecord> SingleObjectCodec<T> of(Class<T> type) {
    return new SingleObjectCodec<>(type);
  }

  public Class<T> type() {
    return type;
  }

  public Schema schema() {
    return SpecificData.get().getSchema(type);
  }

  public byte[] encode(T record) {
    try {
      ByteBuffer buffer = encoder().encode(record);
      byte[] bytes = new byte[buffer.remaining()];
      buffer.get(bytes);
      return bytes;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot encode " + type.getSimpleName(), e);
    }
  }

  /**
   * Decodes a value written by any released version of this record's schema.
   *
   * @throws RecordDecodingException if the bytes are null, too short, not single-object encoded,
   *     written with a schema that is not a release of this record (another record type, a foreign
   *     producer), truncated, larger than {@link #MAX_RECORD_BYTES}, or declares a length beyond
   *     its end
   */
  public T decode(byte[] bytes) throws RecordDecodingException {
    String expected = type.getSimpleName();
    if (bytes == null) {
      throw new RecordDecodingException("expected a " + expected + " record but the value is null");
    }
    if (bytes.length < HEADER_BYTES || bytes[0] != MARKER_0 || bytes[1] != MARKER_1) {
      throw new RecordDecodingException(
          "expected a "
              + expected
              + " record in Avro single-object encoding (marker C3 01 + 8-byte schema"
              + " fingerprint + body) but got "
              + bytes.length
              + " bytes starting "
              + hexPrefix(bytes));
    }
    if (bytes.length > MAX_RECORD_BYTES) {
      throw new RecordDecodingException(
          "the "
              + expected
              + " value of "
              + bytes.length
              + " bytes exceeds the limit of "
              + MAX_RECORD_BYTES
              + " bytes a record may have; not decoded");
    }
    long fingerprint = ByteBuffer.wrap(bytes, 2, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
    DatumReader<T> reader = readers().get(fingerprint);
    try {
      if (reader == null) {
        throw new IOException("unknown writer schema");
      }
      // From the array itself: Avro knows how many bytes are left and refuses a declared length
      // beyond them before allocating (an InputStream would hide that).
      BinaryDecoder body =
          DecoderFactory.get()
              .binaryDecoder(bytes, HEADER_BYTES, bytes.length - HEADER_BYTES, null);
      return reader.read(null, body);
    } catch (SecurityException e) {
      throw e; // a class not trusted by Avro is a setup problem, not bad data
    } catch (IOException | RuntimeException e) {
      // Avro reports bad bodies in many ways (EOFException, AvroRuntimeException,
      // UnsupportedOperationException for absurd lengths, index errors for bad enum or union
      // positions); a value of a known schema that fails is malformed, of an unknown one is
      // foreign.
      if (reader != null) {
        throw new RecordDecodingException(
            "the "
                + expected
                + " record of "
                + bytes.length
                + " bytes is malformed or truncated: "
                + (declaresTooMuch(e)
                    ? "a length it declares exceeds what is left of it or the limits: "
                    : "")
                + e,
            e);
      }
      String writer =
          ReleasedSchemas.describe(fingerprint)
              .map(name -> "a " + name + " record")
              .orElse("a record of a schema no dynnibal release knows");
      throw new RecordDecodingException(
          "expected a "
              + expected
              + " record but the value is "
              + writer
              + " (schema fingerprint "
              + String.format("%016x", fingerprint)
              + "); is a producer writing to the wrong topic?",
          e);
    }
  }

  private BinaryMessageEncoder<T> encoder() {
    BinaryMessageEncoder<T> result = encoder;
    if (result == null) {
      AvroTrust.install();
      result = new BinaryMessageEncoder<>(SpecificData.getForClass(type), schema());
      encoder = result;
    }
    return result;
  }

  private Map<Long, DatumReader<T>> readers() {
    Map<Long, DatumReader<T>> result = readers;
    if (result == null) {
      AvroTrust.install();
      SpecificData data = SpecificData.getForClass(type);
      Schema current = schema();
      Map<Long, DatumReader<T>> byFingerprint = new HashMap<>();
      byFingerprint.put(
          ReleasedSchemas.fingerprint(current), new SpecificDatumReader<>(current, current, data));
      for (Schema released : ReleasedSchemas.versionsOf(type)) {
        byFingerprint.putIfAbsent(
            ReleasedSchemas.fingerprint(released),
            new SpecificDatumReader<>(released, current, data));
      }
      result = Map.copyOf(byFingerprint);
      readers = result;
    }
    return result;
  }

  /**
   * Avro's refusal of a string, bytes or collection length larger than what is left of the value
   * (or than the JVM-wide limit).
   */
  private static boolean declaresTooMuch(Throwable e) {
    String m = String.valueOf(e.getMessage());
    return (e instanceof java.io.EOFException && m.contains("available"))
        || e instanceof org.apache.avro.SystemLimitException
        || (e instanceof UnsupportedOperationException && m.startsWith("Cannot read"));
  }

  private static String hexPrefix(byte[] bytes) {
    return HexFormat.ofDelimiter(" ").formatHex(bytes, 0, Math.min(bytes.length, 12))
        + (bytes.length > 12 ? " ..." : "");
  }
}
