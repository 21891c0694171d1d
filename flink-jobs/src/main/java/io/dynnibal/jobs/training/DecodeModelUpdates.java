package io.dynnibal.jobs.training;

import io.dynnibal.schemas.AvroTrust;
import io.dynnibal.schemas.ModelUpdate;
import io.dynnibal.schemas.RecordDecodingException;
import io.dynnibal.schemas.SingleObjectCodec;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Model-updates topic -> ModelUpdate records, checked before they reach any shard: an unreadable value, a non-finite
 * number or a wrong shape in its matrices goes to dead letters (a shard must never apply half an update).
 */
final class DecodeModelUpdates extends ProcessFunction<KafkaRecord, ModelUpdate> {
  private static final long serialVersionUID = 1L;
  static final String STAGE = "decode-model-updates";

  private transient SingleObjectCodec<ModelUpdate> codec;

  @Override
  public void open(OpenContext context) {
    AvroTrust.install();
    codec = SingleObjectCodec.of(ModelUpdate.class);
  }

  @Override
  public void processElement(KafkaRecord record, Context ctx, Collector<ModelUpdate> out) {
    try {
      if (record.value == null) {
        throw new IllegalArgumentException("the model-updates topic holds a null value");
      }
      ModelUpdate update = codec.decode(record.value);
      check(update);
      out.collect(update);
    } catch (RecordDecodingException | IllegalArgumentException e) {
      ctx.output(DeadLetters.TAG, DeadLetters.of(record, e, STAGE));
    }
  }

  static void check(ModelUpdate update) {
    String what = "model update " + update.getVersion();
    if (update.getVersion() < 1) {
      throw new IllegalArgumentException(what + ": versions start at 1");
    }
    float[][] landmarks = Matrices.rows(update.getLandmarks(), what + " landmarks");
    int d = landmarks.length;
    if (d == 0 || update.getLandmarkIds().size() != d) {
      throw new IllegalArgumentException(what + ": " + d + " landmark vectors but " + update.getLandmarkIds().size()
          + " landmark ids");
    }
    if (update.getProjection().getRows() != d || update.getProjection().getCols() != d) {
      throw new IllegalArgumentException(what + ": projection must be " + d + " x " + d);
    }
    Matrices.values(update.getProjection(), what + " projection");
    if (update.getCacheMap().getRows() != d || update.getCacheMap().getCols() != d) {
      throw new IllegalArgumentException(what + ": cache map must be " + d + " x " + d);
    }
    Matrices.values(update.getCacheMap(), what + " cache map");
    if (update.getSnapshotUri().isBlank()) {
      throw new IllegalArgumentException(what + ": snapshot_uri is empty");
    }
  }
}
