package io.dynnibal.schemas;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;

/**
 * Encodes and decodes one record type in Avro's single-object encoding: the marker {@code C3 01},
 * the 8-byte little-endian CRC-64 fingerprint of the writer's schema, then the Avro binary body.
 * Every Kafka value of the project is written this way, so a reader can tell a foreign or wrong
 * record from a malformed one and say which.
 *
 * <p>Thread-safe and serializable (Flink ships it inside functions); the Avro encoder and decoder
 * are rebuilt lazily after deserialization.
 */
public final class SingleObjectCodec<T extends SpecificRecord> implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final int HEADER_BYTES = 10;
  private static final byte MARKER_0 = (byte) 0xC3;
  private static final byte MARKER_1 = (byte) 0x01;

  private final Class<T> type;
  private transient volatile BinaryMessageEncoder<T> encoder;
  private transient volatile BinaryMessageDecoder<T> decoder;
  private transient volatile Set<Long> readableFingerprints;

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
   *     producer), or truncated
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
    long fingerprint = ByteBuffer.wrap(bytes, 2, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
    BinaryMessageDecoder<T> decoder = decoder();
    try {
      return decoder.decode(bytes);
    } catch (SecurityException e) {
      throw e; // a class not trusted by Avro is a setup problem, not bad data
    } catch (IOException | RuntimeException e) {
      // Avro reports bad bodies in many ways (EOFException, AvroRuntimeException,
      // UnsupportedOperationException for absurd lengths, index errors for bad enum or union
      // positions); a value of a known schema that fails is malformed, of an unknown one is
      // foreign.
      if (readableFingerprints.contains(fingerprint)) {
        throw new RecordDecodingException(
            "the "
                + expected
                + " record of "
                + bytes.length
                + " bytes is malformed or truncated: "
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

  private BinaryMessageDecoder<T> decoder() {
    BinaryMessageDecoder<T> result = decoder;
    if (result == null) {
      AvroTrust.install();
      result = new BinaryMessageDecoder<>(SpecificData.getForClass(type), schema());
      Set<Long> readable = new HashSet<>();
      readable.add(ReleasedSchemas.fingerprint(schema()));
      for (Schema released : ReleasedSchemas.versionsOf(type)) {
        result.addSchema(released);
        readable.add(ReleasedSchemas.fingerprint(released));
      }
      readableFingerprints = Set.copyOf(readable);
      decoder = result;
    }
    return result;
  }

  private static String hexPrefix(byte[] bytes) {
    return HexFormat.ofDelimiter(" ").formatHex(bytes, 0, Math.min(bytes.length, 12))
        + (bytes.length > 12 ? " ..." : "");
  }
}
