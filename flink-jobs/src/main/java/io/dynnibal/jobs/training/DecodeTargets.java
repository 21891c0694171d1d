package io.dynnibal.jobs.training;

import io.dynnibal.schemas.AvroTrust;
import io.dynnibal.schemas.RecordDecodingException;
import io.dynnibal.schemas.SingleObjectCodec;
import io.dynnibal.schemas.Target;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Targets topic (compacted) -> shard inputs. A null value is a tombstone: the target leaves the index. A value that
 * is not a Target, whose id differs from its key, or whose text has no words goes to the dead-letter topic.
 */
final class DecodeTargets extends ProcessFunction<KafkaRecord, ShardInput> {
  private static final long serialVersionUID = 1L;
  static final String STAGE = "decode-targets";

  private final int[] shardKeys;
  private transient SingleObjectCodec<Target> codec;

  DecodeTargets(int[] shardKeys) {
    this.shardKeys = shardKeys;
  }

  @Override
  public void open(OpenContext context) {
    AvroTrust.install();
    codec = SingleObjectCodec.of(Target.class);
  }

  @Override
  public void processElement(KafkaRecord record, Context ctx, Collector<ShardInput> out) {
    String key = record.keyAsString();
    if (record.value == null) {
      if (key == null || key.isEmpty()) {
        ctx.output(DeadLetters.TAG, DeadLetters.of(record, "io.dynnibal.UnusableRecord",
            "a tombstone without a key names no target to delete", STAGE));
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
      problem = "record key \"" + key + "\" differs from target_id \"" + id + "\" (compaction would keep the wrong one)";
    } else if (target.getText().chars().noneMatch(Character::isLetterOrDigit)) {
      problem = "target " + id + " has no text to encode";
    }
    if (problem != null) {
      ctx.output(DeadLetters.TAG, DeadLetters.of(record, "io.dynnibal.UnusableRecord", problem, STAGE));
      return;
    }
    out.collect(ShardInput.upsert(shardKeys[ShardKeys.shardOf(id, shardKeys.length)], id, target.getText()));
  }
}
