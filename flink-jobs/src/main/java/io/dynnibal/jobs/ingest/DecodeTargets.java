package io.dynnibal.jobs.ingest;

import io.dynnibal.jobs.shard.ShardInput;
import io.dynnibal.jobs.shard.ShardKeys;
import io.dynnibal.schemas.AvroTrust;
import io.dynnibal.schemas.RecordDecodingException;
import io.dynnibal.schemas.SingleObjectCodec;
import io.dynnibal.schemas.Target;
import io.dynnibal.stream.DeadLetters;
import io.dynnibal.stream.KafkaRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Targets topic (compacted) -> shard inputs. A null value is a tombstone: the target leaves the
 * index. A value that is not a Target, whose id differs from its key, or whose text has no words
 * goes to the dead-letter topic.
 *
 * <p>Once it has read up to the end offsets the topic had when the job was built (good records and
 * bad), it emits one {@link ShardInput#TARGETS_LOADED} marker: {@link PairsAfterTargets} holds
 * query batches back until then, so training pairs published before the job started never meet a
 * half-loaded index.
 */
public final class DecodeTargets extends ProcessFunction<KafkaRecord, ShardInput>
    implements CheckpointedFunction {
  private static final long serialVersionUID = 1L;
  static final String STAGE = "decode-targets";

  private final int[] shardKeys;
  private final HashMap<Integer, Long> targetsAtStart;
  private transient SingleObjectCodec<Target> codec;

  /**
   * Partitions still short of their end offset at start -> that end offset; empty once the marker
   * is out. Operator state: a restore must not wait again for a partition it had read before the
   * checkpoint.
   */
  private transient Map<Integer, Long> loading;

  private transient ListState<long[]> loadingState;

  public DecodeTargets(int[] shardKeys, HashMap<Integer, Long> targetsAtStart) {
    this.shardKeys = shardKeys;
    this.targetsAtStart = targetsAtStart;
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    loadingState =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>(
                    "targets-loading",
                    org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo
                        .LONG_PRIMITIVE_ARRAY_TYPE_INFO));
    loading = new HashMap<>();
    if (context.isRestored()) {
      for (long[] partitionAndEnd : loadingState.get()) {
        loading.put((int) partitionAndEnd[0], partitionAndEnd[1]);
      }
    } else {
      targetsAtStart.forEach(
          (partition, end) -> {
            if (end > 0) {
              loading.put(partition, end);
            }
          });
    }
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    List<long[]> rows = new ArrayList<>();
    loading.forEach((partition, end) -> rows.add(new long[] {partition, end}));
    loadingState.update(rows);
  }

  @Override
  public void open(OpenContext context) {
    AvroTrust.install();
    codec = SingleObjectCodec.of(Target.class);
  }

  @Override
  public void processElement(KafkaRecord record, Context ctx, Collector<ShardInput> out) {
    decode(record, ctx, out);
    Long end = loading.get(record.partition);
    if (end != null && record.offset >= end - 1) {
      loading.remove(record.partition);
      if (loading.isEmpty()) {
        out.collect(ShardInput.targetsLoaded());
      }
    }
  }

  private void decode(KafkaRecord record, Context ctx, Collector<ShardInput> out) {
    String key = record.keyAsString();
    if (record.value == null) {
      if (key == null || key.isEmpty()) {
        ctx.output(
            DeadLetters.TAG,
            DeadLetters.of(
                record,
                "io.dynnibal.UnusableRecord",
                "a tombstone without a key names no target to delete",
                STAGE));
        return;
      }
      out.collect(ShardInput.delete(shardKeys[ShardKeys.shardOf(key, shardKeys.length)], key));
      return;
    }
    Target target;
    try {
      target = codec.decode(record.value);
    } catch (RecordDecodingException e) {
      ctx.output(DeadLetters.TAG, DeadLetters.of(record, e, STAGE));
      return;
    }
    String id = target.getTargetId();
    String problem = null;
    if (id.isEmpty()) {
      problem = "target_id is empty";
    } else if (key != null && !key.equals(id)) {
      problem =
          "record key "
              + DeadLetters.quoted(key)
              + " differs from target_id "
              + DeadLetters.quoted(id)
              + " (compaction would keep the wrong one)";
    } else if (target.getText().chars().noneMatch(Character::isLetterOrDigit)) {
      problem = "target " + DeadLetters.quoted(id) + " has no text to encode";
    }
    if (problem != null) {
      ctx.output(
          DeadLetters.TAG, DeadLetters.of(record, "io.dynnibal.UnusableRecord", problem, STAGE));
      return;
    }
    out.collect(
        ShardInput.upsert(
            shardKeys[ShardKeys.shardOf(id, shardKeys.length)], id, target.getText()));
  }
}
