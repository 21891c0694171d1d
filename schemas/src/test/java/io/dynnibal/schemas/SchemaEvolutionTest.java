package io.dynnibal.schemas;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaCompatibility.SchemaCompatibilityType;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * Every released version of every topic record is compatible with the current schema in both
 * directions (full transitive compatibility): the current code reads what any release wrote, and
 * code of any release could resolve what the current one writes. (At run time a consumer knows only
 * the releases in its own jar: upgrade consumers first.)
 */
class SchemaEvolutionTest {
  static final Iterable<Class<? extends SpecificRecord>> TOPIC_RECORDS =
      ReleasedSchemas.TOPIC_RECORDS;

  @ParameterizedTest
  @FieldSource("TOPIC_RECORDS")
  void theCurrentSchemaIsReleased(Class<? extends SpecificRecord> type) {
    List<Schema> releases = ReleasedSchemas.versionsOf(type);
    assertFalse(releases.isEmpty(), "no released schema for " + type.getSimpleName());
    Schema latest = releases.get(releases.size() - 1);
    assertEquals(
        latest,
        SpecificData.get().getSchema(type),
        type.getSimpleName()
            + ".avsc changed: release it as "
            + type.getSimpleName()
            + ".v"
            + (releases.size() + 1)
            + ".avsc under schemas/src/main/resources/io/dynnibal/schemas/released/ (never edit a release)");
  }

  @ParameterizedTest
  @FieldSource("TOPIC_RECORDS")
  void everyReleaseIsCompatibleWithTheCurrentSchemaBothWays(Class<? extends SpecificRecord> type) {
    Schema current = SpecificData.get().getSchema(type);
    List<Schema> releases = ReleasedSchemas.versionsOf(type);
    for (int i = 0; i < releases.size(); i++) {
      String release = type.getSimpleName() + " v" + (i + 1);
      assertEquals(
          List.of(), incompatibilities(current, releases.get(i)), "current cannot read " + release);
      assertEquals(
          List.of(), incompatibilities(releases.get(i), current), release + " cannot read current");
    }
  }

  @ParameterizedTest
  @FieldSource("TOPIC_RECORDS")
  void aRecordWrittenByEachReleaseDecodes(Class<? extends SpecificRecord> type) throws Exception {
    SpecificRecord sample = SampleRecords.of(type);
    Schema current = SpecificData.get().getSchema(type);
    for (Schema release : ReleasedSchemas.versionsOf(type)) {
      GenericRecord asRelease = convert(sample, current, release);
      byte[] bytes = SingleObjectCodecTest.encodeGeneric(release, asRelease);
      SpecificRecord decoded = SingleObjectCodec.of(type).decode(bytes);
      for (Schema.Field field : release.getFields()) {
        int pos = current.getField(field.name()).pos();
        assertEquals(sample.get(pos), decoded.get(pos), field.name() + " written by a release");
      }
    }
  }

  /**
   * The check above must be able to fail: a new field without a default breaks old writers'
   * records.
   */
  @Test
  void aRequiredFieldWithoutDefaultIsReportedIncompatible() {
    Schema current = SpecificData.get().getSchema(TrainingPair.class);
    Schema.Field added =
        new Schema.Field("weight", Schema.create(Schema.Type.DOUBLE), "no default", (Object) null);
    List<Schema.Field> fields = new ArrayList<>();
    for (Schema.Field f : current.getFields()) {
      fields.add(new Schema.Field(f, f.schema()));
    }
    fields.add(added);
    Schema changed =
        Schema.createRecord(
            current.getName(), current.getDoc(), current.getNamespace(), false, fields);
    assertNotEquals(List.of(), incompatibilities(changed, current));
  }

  private static List<String> incompatibilities(Schema reader, Schema writer) {
    SchemaCompatibility.SchemaPairCompatibility result =
        SchemaCompatibility.checkReaderWriterCompatibility(reader, writer);
    if (result.getType() == SchemaCompatibilityType.COMPATIBLE) {
      return List.of();
    }
    return result.getResult().getIncompatibilities().stream().map(Object::toString).toList();
  }

  /**
   * Re-reads a record as another schema would hold it (Avro schema resolution, no hand mapping).
   */
  private static GenericRecord convert(SpecificRecord record, Schema writer, Schema reader)
      throws Exception {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
    new GenericDatumWriter<Object>(writer, GenericData.get()).write(record, encoder);
    encoder.flush();
    return new GenericDatumReader<GenericRecord>(writer, reader)
        .read(null, DecoderFactory.get().binaryDecoder(out.toByteArray(), null));
  }
}
