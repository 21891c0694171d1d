package io.dynnibal.sampler;

/**
 * {@code exhaustive}, the oracle: each shard scores every target at full dimension, re-encoded with
 * each model update (every w steps), and offers each query its negatives from the exact softmax
 * (sample mode) or its best (top-k mode).
 */
public record Exhaustive() implements Sampler {
  public static final String ID = "exhaustive";

  @Override
  public String id() {
    return ID;
  }

  @Override
  public <M> M shardMiner(ShardMiners<M> shard) {
    return shard.pool(1.0, 0);
  }

  @Override
  public long miningFloats(MiningFloats footprint) {
    return footprint.shardPools();
  }
}
