package io.dynnibal.sampler;

/**
 * {@code exact-cache}: each shard scores every target's Nyström cache vector against the query and
 * draws from that softmax exactly (sample mode) or takes its best (top-k mode). The paper's cached
 * approximation without its tree: the negatives DyNNIBAL-MH and rejection sampling approximate, at
 * a cost linear in the shard's targets. The shards keep the same caches as DyNNIBAL's and apply the
 * same model updates every w steps.
 */
public record ExactCache() implements Sampler {
  public static final String ID = "exact-cache";

  @Override
  public String id() {
    return ID;
  }

  @Override
  public <M> M shardMiner(ShardMiners<M> shard) {
    return shard.exactCache();
  }

  @Override
  public long miningFloats(MiningFloats footprint) {
    return footprint.reencodingMap();
  }
}
