package io.dynnibal.jobs.shard;

import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.FullDimensionPool;
import io.dynnibal.stream.QueryBatch;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Exhaustive and stochastic negative mining: each query's best members of the shard key's pool,
 * scored at full dimension.
 */
final class PoolMiner implements HardNegativeMiner {
  private final ShardSettings settings;
  private final Map<Integer, ShardPool> pools = new HashMap<>();

  PoolMiner(ShardSettings settings) {
    this.settings = settings;
  }

  @Override
  public Mined mine(Shard shard, List<Features> queries, QueryBatch batch, SplittableRandom random)
      throws Exception {
    int perQuery = settings.negativesPerQuery();
    ShardPool pool = pools.computeIfAbsent(shard.key(), k -> ShardPool.of(settings));
    FullDimensionPool members =
        pool.forBatch(
            batch.batchId,
            shard.model(),
            shard.index(),
            shard.targets(),
            settings.seed() ^ shard.key());
    FullDimensionPool.TopK top =
        members.topK(shard.model().encoder.encodeQueries(queries), perQuery + 1);
    Collected out = new Collected();
    for (int q = 0; q < queries.size(); q++) {
      int taken = 0;
      for (int r = 0; r < top.members()[q].length && taken < perQuery; r++) {
        String id = members.id(top.members()[q][r]);
        if (!id.equals(batch.targetIds[q]) && shard.index().contains(id)) {
          float logit = settings.scoreScale() * top.scores()[q][r];
          out.add(q, shard.targets().get(id).withoutCache(logit));
          taken++;
        }
      }
    }
    return out.result();
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
