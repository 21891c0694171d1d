package io.dynnibal.jobs.shard;

import io.dynnibal.schemas.ModelUpdate;
import io.dynnibal.stream.QueryBatch;

/**
 * What a shard receives on its keyed input: a target upsert or delete, a batch of queries to sample
 * for, or a model update (each shard key gets its own copy).
 */
public class ShardInput {
  public static final byte UPSERT = 0;
  public static final byte DELETE = 1;
  public static final byte QUERIES = 2;

  /**
   * From the targets decoder to {@link PairsAfterTargets} only: the targets present at the job's
   * start are read.
   */
  public static final byte TARGETS_LOADED = 3;

  public static final byte MODEL_UPDATE = 4;

  public byte kind;

  /** The shard's key (see {@link ShardKeys}). */
  public int shardKey;

  public String targetId;
  public String text;
  public QueryBatch batch;
  public ModelUpdate update;

  public ShardInput() {}

  public static ShardInput upsert(int shardKey, String targetId, String text) {
    ShardInput in = new ShardInput();
    in.kind = UPSERT;
    in.shardKey = shardKey;
    in.targetId = targetId;
    in.text = text;
    return in;
  }

  public static ShardInput delete(int shardKey, String targetId) {
    ShardInput in = new ShardInput();
    in.kind = DELETE;
    in.shardKey = shardKey;
    in.targetId = targetId;
    return in;
  }

  public static ShardInput targetsLoaded() {
    ShardInput in = new ShardInput();
    in.kind = TARGETS_LOADED;
    in.shardKey = -1;
    return in;
  }

  public static ShardInput queries(int shardKey, QueryBatch batch) {
    ShardInput in = new ShardInput();
    in.kind = QUERIES;
    in.shardKey = shardKey;
    in.batch = batch;
    return in;
  }

  public static ShardInput modelUpdate(int shardKey, ModelUpdate update) {
    ShardInput in = new ShardInput();
    in.kind = MODEL_UPDATE;
    in.shardKey = shardKey;
    in.update = update;
    return in;
  }
}
