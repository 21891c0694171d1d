package io.dynnibal.jobs.shard;

import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.FullDimensionPool;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.stream.QueryBatch;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Exhaustive and stochastic negative mining: for each query, {@code negatives.per.example} members
 * of the shard key's pool scored at full dimension, its positive excluded: drawn from the exact
 * softmax over the pool (sample mode) or the best (top-k mode, the paper's oracle).
 */
final class PoolMiner implements HardNegativeMiner {
  private final ShardSettings settings;
  private final double fraction;
  private final int refreshEvery;
  private final Map<Integer, ShardPool> pools = new HashMap<>();

  /** Mines a pool of {@code fraction} of each key's targets (see {@link ShardPool#of}). */
  PoolMiner(ShardSettings settings, double fraction, int refreshEvery) {
    this.settings = settings;
    this.fraction = fraction;
    this.refreshEvery = refreshEvery;
  }

  /** Whether the pools hold every target, re-encoded with each model version (the oracle). */
  boolean everyTarget() {
    return ShardPool.isEveryTarget(fraction, refreshEvery);
  }

  @Override
  public Mined mine(Shard shard, List<Features> queries, QueryBatch batch, SplittableRandom random)
      throws Exception {
    int perExample = settings.minedPerExample();
    ShardPool pool = pools.computeIfAbsent(shard.key(), k -> ShardPool.of(fraction, refreshEvery));
    FullDimensionPool members =
        pool.forBatch(
            batch.batchId,
            shard.model(),
            shard.index(),
            shard.targets(),
            settings.seed() ^ shard.key());
    float[][] embedded = shard.model().encoder.encodeQueries(queries);
    float beta = (float) settings.samplingScale();
    Collected out = new Collected(queries.size());
    if (settings.negativesMode() == NegativesMode.TOP_K) {
      FullDimensionPool.TopK top = members.topK(embedded, perExample + 1);
      for (int q = 0; q < queries.size(); q++) {
        int taken = 0;
        for (int r = 0; r < top.members()[q].length && taken < perExample; r++) {
          String id = members.id(top.members()[q][r]);
          if (!id.equals(batch.targetIds[q]) && shard.index().contains(id)) {
            float logit = beta * top.scores()[q][r];
            out.add(q, shard.targets().get(id).withoutCache(logit));
            taken++;
          }
        }
      }
      return out.result();
    }
    int[] positives = new int[queries.size()];
    for (int q = 0; q < queries.size(); q++) {
      positives[q] = members.memberOf(batch.targetIds[q]);
    }
    FullDimensionPool.Drawn drawn = members.sample(embedded, perExample, beta, positives, random);
    // A pool of a fraction of the shard stands for all of it: its mass scales by the fraction.
    double scale = Math.log(shard.index().size() / (double) Math.max(1, members.size()));
    for (int q = 0; q < queries.size(); q++) {
      out.logMass(q, drawn.logMass()[q] + scale);
      for (int j = 0; j < drawn.members()[q].length; j++) {
        String id = members.id(drawn.members()[q][j]);
        if (shard.index().contains(id)) { // deleted since the pool was built: skipped
          float logit = beta * drawn.scores()[q][j];
          // Drawn from the pool's own softmax: its unscaled mass is the draw's normaliser.
          out.add(
              q, shard.targets().get(id).withoutCache(logit), (float) (logit - drawn.logMass()[q]));
        }
      }
    }
    return out.result();
  }

  /** The pools by shard key (the fidelity probe reads the exhaustive ones). */
  Map<Integer, ShardPool> pools() {
    return pools;
  }

  @Override
  public long floats(int key) {
    ShardPool pool = pools.get(key);
    return pool == null ? 0 : pool.floats();
  }

  @Override
  public void close() {
    pools.values().forEach(ShardPool::close);
  }
}
