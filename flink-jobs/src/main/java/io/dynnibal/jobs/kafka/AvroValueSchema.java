package io.dynnibal.jobs.kafka;

import io.dynnibal.schemas.AvroTrust;
import io.dynnibal.schemas.SingleObjectCodec;
import java.io.IOException;
import org.apache.avro.specific.SpecificRecordBase;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.serialization.SerializationSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.formats.avro.typeutils.AvroTypeInfo;

/**
 * Kafka values of one Avro record type, in single-object encoding, for Flink's Kafka source and
 * sink. The produced type information is Avro's, so records travel between operators and sit in
 * state without Kryo.
 *
 * <p>A value that cannot be decoded throws {@link io.dynnibal.schemas.RecordDecodingException} with
 * the reason; sources that must keep running route such values to the dead-letter topic instead of
 * using this class directly. Not for the compacted targets topic either: a null value there is a
 * delete, which a value-only schema cannot express (it rejects null).
 */
public final class AvroValueSchema<T extends SpecificRecordBase>
    implements DeserializationSchema<T>, SerializationSchema<T> {
  private static final long serialVersionUID = 1L;

  private final SingleObjectCodec<T> codec;

  private AvroValueSchema(Class<T> type) {
    this.codec = SingleObjectCodec.of(type);
  }

  public static <T extends SpecificRecordBase> AvroValueSchema<T> of(Class<T> type) {
    return new AvroValueSchema<>(type);
  }

  @Override
  public void open(DeserializationSchema.InitializationContext context) {
    AvroTrust.install();
  }

  @Override
  public void open(SerializationSchema.InitializationContext context) {
    AvroTrust.install();
  }

  @Override
  public T deserialize(byte[] message) throws IOException {
    return codec.decode(message);
  }

  @Override
  public boolean isEndOfStream(T nextElement) {
    return false;
  }

  @Override
  public byte[] serialize(T element) {
    return codec.encode(element);
  }

  @Override
  public TypeInformation<T> getProducedType() {
    return new AvroTypeInfo<>(codec.type());
  }
}
