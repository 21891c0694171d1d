package io.dynnibal.sampler;

import io.dynnibal.settings.Setting;
import java.io.Serializable;

/**
 * {@code stochastic-negative-mining} (Reddi et al. 2019): each shard scores a random fraction of
 * its targets at full dimension and offers each query its best; the pool is redrawn every {@code
 * snm.refresh.every} steps and whenever the shard gets newer parameters.
 */
public record StochasticNegativeMining(double poolFraction, int refreshEvery) implements Sampler {
  public static final String ID = "stochastic-negative-mining";

  /** Its settings. */
  public static final class Settings implements Serializable {
    private static final long serialVersionUID = 1L;

    @Setting(
        value = "stochastic negative mining: fraction of targets in the pool",
        min = 0,
        aboveMin = true,
        max = 1)
    public double snmPoolFraction = 0.01;

    @Setting(value = "stochastic negative mining: steps between pool redraws", min = 1)
    public int snmRefreshEvery = 100;
  }

  static StochasticNegativeMining of(SamplerSettings s) {
    return new StochasticNegativeMining(s.snm.snmPoolFraction, s.snm.snmRefreshEvery);
  }

  @Override
  public String id() {
    return ID;
  }

  @Override
  public <M> M shardMiner(ShardMiners<M> shard) {
    return shard.pool(poolFraction, refreshEvery);
  }

  @Override
  public long miningFloats(MiningFloats footprint) {
    return footprint.shardPools();
  }
}
