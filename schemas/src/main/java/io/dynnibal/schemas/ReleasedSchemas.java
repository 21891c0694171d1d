package io.dynnibal.schemas;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.specific.SpecificRecord;

/**
 * Every released version of every record that travels on a topic, read from {@code
 * io/dynnibal/schemas/released/<Record>.v<N>.avsc}. A release is never edited: a schema change adds
 * the next version, and {@code SchemaEvolutionTest} checks each release against the current schema
 * in both directions. Decoders register every release bundled with them, so records written by an
 * older producer are read. A record of a release newer than the consumer's jar is rejected as
 * unknown (and dead-lettered): upgrade consumers first.
 */
public final class ReleasedSchemas {

  /** The records that are Kafka values, in the order the topics are usually listed. */
  public static final List<Class<? extends SpecificRecord>> TOPIC_RECORDS =
      List.of(
          TrainingPair.class,
          Target.class,
          ModelUpdate.class,
          TrainingMetrics.class,
          DeadLetter.class,
          TrainerProgress.class);

  private static final String RESOURCE_DIR = "/io/dynnibal/schemas/released/";
  private static final Map<Long, String> NAME_BY_FINGERPRINT = indexFingerprints();

  private ReleasedSchemas() {}

  /** Released versions of a record, oldest first; element i is version i + 1. */
  public static List<Schema> versionsOf(Class<? extends SpecificRecord> type) {
    List<Schema> versions = new ArrayList<>();
    for (int version = 1; ; version++) {
      String resource = RESOURCE_DIR + type.getSimpleName() + ".v" + version + ".avsc";
      try (InputStream in = ReleasedSchemas.class.getResourceAsStream(resource)) {
        if (in == null) {
          return versions;
        }
        versions.add(new Schema.Parser().parse(in));
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read released schema " + resource, e);
      }
    }
  }

  /** "TrainingPair v1" for the fingerprint of a released schema, if it is one of ours. */
  public static Optional<String> describe(long fingerprint) {
    return Optional.ofNullable(NAME_BY_FINGERPRINT.get(fingerprint));
  }

  /**
   * The fingerprint the single-object encoding writes in its header (CRC-64-AVRO of the parsing
   * canonical form).
   */
  public static long fingerprint(Schema schema) {
    return SchemaNormalization.parsingFingerprint64(schema);
  }

  private static Map<Long, String> indexFingerprints() {
    Map<Long, String> names = new HashMap<>();
    for (Class<? extends SpecificRecord> type : TOPIC_RECORDS) {
      List<Schema> versions = versionsOf(type);
      for (int i = 0; i < versions.size(); i++) {
        names.putIfAbsent(fingerprint(versions.get(i)), type.getSimpleName() + " v" + (i + 1));
      }
    }
    return Map.copyOf(names);
  }
}
