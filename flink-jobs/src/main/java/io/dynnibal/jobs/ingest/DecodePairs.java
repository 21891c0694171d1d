package io.dynnibal.jobs.ingest;

import io.dynnibal.schemas.AvroTrust;
import io.dynnibal.schemas.RecordDecodingException;
import io.dynnibal.schemas.SingleObjectCodec;
import io.dynnibal.schemas.TrainingPair;
import io.dynnibal.stream.DeadLetters;
import io.dynnibal.stream.KafkaRecord;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Pairs topic -> TrainingPair records; unreadable values and pairs without a usable query go to
 * dead letters.
 */
public final class DecodePairs extends ProcessFunction<KafkaRecord, TrainingPair> {
  private static final long serialVersionUID = 1L;
  static final String STAGE = "decode-pairs";

  private transient SingleObjectCodec<TrainingPair> codec;

  @Override
  public void open(OpenContext context) {
    AvroTrust.install();
    codec = SingleObjectCodec.of(TrainingPair.class);
  }

  @Override
  public void processElement(KafkaRecord record, Context ctx, Collector<TrainingPair> out) {
    if (record.value == null) {
      ctx.output(
          DeadLetters.TAG,
          DeadLetters.of(
              record, "io.dynnibal.UnusableRecord", "the pairs topic holds a null value", STAGE));
      return;
    }
    TrainingPair pair;
    try {
      pair = codec.decode(record.value);
    } catch (RecordDecodingException e) {
      ctx.output(DeadLetters.TAG, DeadLetters.of(record, e, STAGE));
      return;
    }
    String problem = null;
    if (pair.getPairId().isEmpty()) {
      problem = "pair_id is empty";
    } else if (pair.getTargetId().isEmpty()) {
      problem = "pair " + pair.getPairId() + " has an empty target_id";
    } else if (pair.getQueryText().chars().noneMatch(Character::isLetterOrDigit)) {
      problem = "pair " + pair.getPairId() + " has no query text to encode";
    }
    if (problem != null) {
      ctx.output(
          DeadLetters.TAG, DeadLetters.of(record, "io.dynnibal.UnusableRecord", problem, STAGE));
      return;
    }
    out.collect(pair);
  }
}
