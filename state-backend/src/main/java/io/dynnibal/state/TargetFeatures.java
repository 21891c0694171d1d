package io.dynnibal.state;

/**
 * A target as the index keeps and ships it: id, hashed features (what the trainer's target tower
 * reads) and its cached d' vector. Also the value of the shards' RocksDB map state (id -> this),
 * where it holds the text instead of the features ({@link ShardTargets}).
 */
public class TargetFeatures {
  public String id;
  public int[] featureIds;
  public float[] featureWeights;

  /**
   * The target's text, in the shards' state only (features are recomputed from it); null on the
   * wire, and in state written before texts were stored.
   */
  public String text;

  /**
   * The Nyström cache vector at the shard's model version; null where the receiver does not need
   * it.
   */
  public float[] cache;

  /** beta * <z_query, z_target> for a sampled negative; 0 otherwise. */
  public float logit;

  /** Model version of {@code cache}. */
  public long version;

  /**
   * In the shards' state: the version whose model encoded {@code cache} exactly, when a rebase has
   * since moved it to {@code version} by maps; -1 when {@code version} is that version (and in
   * state written before this field).
   */
  public long encodedAt = -1;

  public TargetFeatures() {}

  public TargetFeatures(String id, int[] featureIds, float[] featureWeights, float[] cache) {
    this.id = id;
    this.featureIds = featureIds;
    this.featureWeights = featureWeights;
    this.cache = cache;
  }

  /** The version whose model encoded {@code cache} exactly (see {@link #encodedAt}). */
  public long exactAt() {
    return encodedAt >= 0 ? encodedAt : version;
  }

  /** A copy without the cache vector (what the trainer needs of a negative). */
  public TargetFeatures withoutCache(float withLogit) {
    TargetFeatures t = new TargetFeatures();
    t.id = id;
    t.featureIds = featureIds;
    t.featureWeights = featureWeights;
    t.logit = withLogit;
    t.version = version;
    return t;
  }
}
