package io.dynnibal.jobs.shard;

import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.FullDimensionPool;
import io.dynnibal.negatives.Sampler;
import io.dynnibal.state.ShardIndex;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * One shard's brute-force pool for {@code exhaustive} and {@code stochastic-negative-mining}, and
 * when to rebuild it. Exhaustive pools every target of the shard and is rebuilt with each model
 * version the shard receives (every w steps, the paper's oracle refresh). Stochastic negative
 * mining pools a random fraction, redrawn every {@code snm.refresh.every} steps and with each new
 * model version. Members are encoded at full dimension from the features in the shard's state, by
 * the shard's current encoder.
 *
 * <p>Between rebuilds the pool is stale, by design (that is these baselines' trade-off). Targets
 * that joined since are not in it; targets deleted since are skipped when offered.
 */
final class ShardPool implements AutoCloseable {
  private final double fraction;
  private final int refreshEvery;
  private FullDimensionPool pool;
  private long builtVersion = -1;
  private long builtPeriod = -1;

  private ShardPool(double fraction, int refreshEvery) {
    this.fraction = fraction;
    this.refreshEvery = refreshEvery;
  }

  static ShardPool of(ShardSettings settings) {
    return settings.sampler() == Sampler.EXHAUSTIVE
        ? everyTarget()
        : new ShardPool(settings.snmPoolFraction(), settings.snmRefreshEvery());
  }

  /** A pool of every target of the shard, rebuilt with each model version. */
  static ShardPool everyTarget() {
    return new ShardPool(1.0, 0);
  }

  /** The pool to mine {@code batchId} with, rebuilt first when due. */
  FullDimensionPool forBatch(
      long batchId,
      ShardModel model,
      ShardIndex index,
      HardNegativeMiner.StoredTargets state,
      long seed)
      throws Exception {
    long period = refreshEvery == 0 ? 0 : batchId / refreshEvery;
    if (pool != null && builtVersion == model.version && builtPeriod == period) {
      return pool;
    }
    List<String> ids =
        fraction >= 1
            ? index.ids()
            : draw(index, seed ^ (period * 0x9E3779B97F4A7C15L) ^ model.version);
    List<Features> features = new ArrayList<>(ids.size());
    for (String id : ids) {
      features.add(Features.of(state.get(id)));
    }
    float[][] vectors = ids.isEmpty() ? new float[0][] : model.encoder.encodeTargets(features);
    close();
    pool = FullDimensionPool.of(ids, vectors, model.encoder.config().outputDim());
    builtVersion = model.version;
    builtPeriod = period;
    return pool;
  }

  /** ceil(fraction x size) distinct targets, uniformly. */
  private List<String> draw(ShardIndex index, long seed) {
    int wanted = (int) Math.min(index.size(), Math.ceil(fraction * index.size()));
    SplittableRandom random = new SplittableRandom(seed);
    Set<String> chosen = new LinkedHashSet<>();
    while (chosen.size() < wanted) {
      chosen.add(index.uniform(random));
    }
    return new ArrayList<>(chosen);
  }

  long floats() {
    return pool == null ? 0 : pool.floats();
  }

  @Override
  public void close() {
    if (pool != null) {
      pool.close();
      pool = null;
    }
  }
}
