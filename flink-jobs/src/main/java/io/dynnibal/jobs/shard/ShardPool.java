package io.dynnibal.jobs.shard;

import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.FullDimensionPool;
import io.dynnibal.negatives.Sampler;
import io.dynnibal.state.ShardIndex;
import java.util.ArrayList;
import java.util.Arrays;
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
 * <p>Between rebuilds the pool's vectors are stale, by design (that is these baselines' trade-off);
 * targets deleted since are skipped when offered. A pool of every target takes the targets that
 * join the index between rebuilds before the next batch (encoded by the same model), so under
 * {@code negatives.pool=positives}, whose index grows with every batch early in a run, the oracle
 * and the fidelity probe mine what the tree sampler can draw. A random fraction is redrawn every
 * {@code snm.refresh.every} steps.
 */
final class ShardPool implements AutoCloseable {
  private final double fraction;
  private final int refreshEvery;
  private FullDimensionPool pool;
  private long builtVersion = -1;
  private long builtPeriod = -1;
  private ShardIndex builtFrom;
  private int builtJoined;
  private List<String> builtIds;
  private float[][] builtVectors;

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
    boolean everyTarget = fraction >= 1;
    if (pool != null
        && builtVersion == model.version
        && builtPeriod == period
        && (!everyTarget || builtFrom == index)) {
      if (everyTarget && index.joined() > builtJoined) {
        List<String> newcomers = index.idsJoinedSince(builtJoined);
        List<String> ids = new ArrayList<>(builtIds);
        ids.addAll(newcomers);
        float[][] fresh = encode(newcomers, model, state);
        float[][] vectors = Arrays.copyOf(builtVectors, builtVectors.length + fresh.length);
        System.arraycopy(fresh, 0, vectors, builtVectors.length, fresh.length);
        build(ids, vectors, model, index);
      }
      return pool;
    }
    List<String> ids =
        everyTarget
            ? index.ids()
            : draw(index, seed ^ (period * 0x9E3779B97F4A7C15L) ^ model.version);
    build(ids, encode(ids, model, state), model, index);
    builtVersion = model.version;
    builtPeriod = period;
    return pool;
  }

  private static float[][] encode(
      List<String> ids, ShardModel model, HardNegativeMiner.StoredTargets state) throws Exception {
    List<Features> features = new ArrayList<>(ids.size());
    for (String id : ids) {
      features.add(Features.of(state.get(id)));
    }
    return ids.isEmpty() ? new float[0][] : model.encoder.encodeTargets(features);
  }

  private void build(List<String> ids, float[][] vectors, ShardModel model, ShardIndex index) {
    close();
    pool = FullDimensionPool.of(ids, vectors, model.encoder.config().outputDim());
    builtFrom = index;
    builtJoined = index.joined();
    builtIds = ids;
    builtVectors = vectors;
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
