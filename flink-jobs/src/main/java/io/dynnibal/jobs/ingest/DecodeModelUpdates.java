package io.dynnibal.jobs.ingest;

import io.dynnibal.jobs.shard.ShardInput;
import io.dynnibal.schemas.AvroTrust;
import io.dynnibal.schemas.Matrices;
import io.dynnibal.schemas.ModelUpdate;
import io.dynnibal.schemas.RecordDecodingException;
import io.dynnibal.schemas.SingleObjectCodec;
import io.dynnibal.snapshot.ParameterSnapshots;
import io.dynnibal.stream.DeadLetters;
import io.dynnibal.stream.KafkaRecord;
import java.nio.file.Path;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Model-updates topic -> one {@link ShardInput#MODEL_UPDATE} per shard key, checked before they
 * reach any shard: an unreadable value, a non-finite number or a wrong shape in its matrices goes
 * to dead letters (a shard must never apply half an update), and so does an update of another job
 * (its {@code job} is not this job's consumer group: two jobs on one topic prefix) or one whose
 * snapshot lies outside this job's {@code snapshot.dir} (a shard loads only models its own trainer
 * wrote).
 *
 * <p>Fanned out per key rather than broadcast: Flink checkpoints a task with a broadcast input
 * aligned, so the shards' barriers would queue behind every buffered batch and a model update
 * (committed with a checkpoint) would reach them only once the backlog drained. Keyed edges take
 * unaligned barriers. The shards read updates on their own input (see {@link
 * io.dynnibal.jobs.shard.ShardIndexFunction#processElement2}).
 */
public final class DecodeModelUpdates extends ProcessFunction<KafkaRecord, ShardInput> {
  private static final long serialVersionUID = 1L;
  static final String STAGE = "decode-model-updates";

  private final int[] shardKeys;
  private final int landmarks;
  private final int encodingDim;
  private final String job;
  private final String snapshotDir;
  private transient SingleObjectCodec<ModelUpdate> codec;

  /**
   * Updates must have {@code landmarks} (d') landmarks of dimension {@code encodingDim} (d), the
   * job's shape, be made by {@code job} and have their snapshot under {@code snapshotDir}.
   */
  public DecodeModelUpdates(
      int[] shardKeys, int landmarks, int encodingDim, String job, String snapshotDir) {
    this.shardKeys = shardKeys;
    this.landmarks = landmarks;
    this.encodingDim = encodingDim;
    this.job = job;
    this.snapshotDir = snapshotDir;
  }

  @Override
  public void open(OpenContext context) {
    AvroTrust.install();
    codec = SingleObjectCodec.of(ModelUpdate.class);
  }

  @Override
  public void processElement(KafkaRecord record, Context ctx, Collector<ShardInput> out) {
    try {
      if (record.value == null) {
        throw new IllegalArgumentException("the model-updates topic holds a null value");
      }
      ModelUpdate update = codec.decode(record.value);
      check(update, landmarks, encodingDim);
      checkProvenance(update, job, snapshotDir);
      for (int key : shardKeys) {
        out.collect(ShardInput.modelUpdate(key, update));
      }
    } catch (RecordDecodingException | IllegalArgumentException e) {
      ctx.output(DeadLetters.TAG, DeadLetters.of(record, e, STAGE));
    }
  }

  /** The update is this job's, and its snapshot is where this job's trainer writes. */
  static void checkProvenance(ModelUpdate update, String job, String snapshotDir) {
    String what = "model update " + update.getVersion();
    if (update.getJob() == null) {
      throw new IllegalArgumentException(
          what
              + " names no job (written by a job before schema v4, or another tool): this job is "
              + DeadLetters.quoted(job));
    }
    if (!update.getJob().equals(job)) {
      throw new IllegalArgumentException(
          what
              + " is of job "
              + DeadLetters.quoted(update.getJob())
              + ", not of this job "
              + DeadLetters.quoted(job)
              + " (another job on the same topic prefix? give each job a topic.prefix of its own)");
    }
    Path base = ParameterSnapshots.toPath(ParameterSnapshots.parse(snapshotDir)).normalize();
    Path snapshot;
    try {
      snapshot = ParameterSnapshots.toPath(ParameterSnapshots.parse(update.getSnapshotUri()));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          what + ": snapshot_uri " + DeadLetters.quoted(update.getSnapshotUri()) + " is no path");
    }
    if (!snapshot.normalize().startsWith(base)) {
      throw new IllegalArgumentException(
          what
              + ": its snapshot "
              + DeadLetters.quoted(update.getSnapshotUri())
              + " lies outside this job's snapshot.dir "
              + base);
    }
  }

  static void check(ModelUpdate update, int expectedLandmarks, int expectedDim) {
    String what = "model update " + update.getVersion();
    if (update.getVersion() < 1) {
      throw new IllegalArgumentException(what + ": versions start at 1");
    }
    if (update.getLandmarks().getRows() != expectedLandmarks
        || update.getLandmarks().getCols() != expectedDim) {
      throw new IllegalArgumentException(
          what
              + ": landmarks are "
              + update.getLandmarks().getRows()
              + " x "
              + update.getLandmarks().getCols()
              + ", this job's shape is d' = "
              + expectedLandmarks
              + " x d = "
              + expectedDim);
    }
    float[][] landmarks = Matrices.rows(update.getLandmarks(), what + " landmarks");
    int d = landmarks.length;
    if (d == 0 || update.getLandmarkIds().size() != d) {
      throw new IllegalArgumentException(
          what
              + ": "
              + d
              + " landmark vectors but "
              + update.getLandmarkIds().size()
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
