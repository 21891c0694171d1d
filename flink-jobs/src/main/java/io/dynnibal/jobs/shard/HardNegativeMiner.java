package io.dynnibal.jobs.shard;

import io.dynnibal.model.features.Features;
import io.dynnibal.state.ShardIndex;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.QueryBatch;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.flink.metrics.Counter;

/**
 * How a shard finds hard negatives for a batch's queries: from its SG tree over Nyström vectors
 * ({@link TreeMiner}) or by brute force over a pool of full-dimension vectors ({@link PoolMiner}).
 * A query's own positive is never offered: it is masked in the loss anyway, so it would only waste
 * a slot.
 */
interface HardNegativeMiner extends AutoCloseable {

  /** A shard key's stored targets by id (its map state, read-only). */
  @FunctionalInterface
  interface StoredTargets {
    TargetFeatures get(String id) throws Exception;
  }

  /** One shard key's data a miner reads. */
  record Shard(int key, ShardIndex index, StoredTargets targets, ShardModel model) {}

  /**
   * Each offered negative with the query (index in the batch) it was mined for, and the MH chains'
   * proposal and acceptance counts (zero for other miners).
   */
  record Mined(List<Integer> queryOf, List<TargetFeatures> targets, long proposals, long accepted) {
    static Mined none() {
      return new Mined(List.of(), List.of(), 0, 0);
    }

    public Mined {
      if (queryOf.size() != targets.size()) {
        throw new IllegalArgumentException(queryOf.size() + " queries for " + targets.size());
      }
    }
  }

  Mined mine(Shard shard, List<Features> queries, QueryBatch batch, SplittableRandom random)
      throws Exception;

  /** Floats held at full dimension for mining by this key (the accelerator memory it implies). */
  default long floats(int key) {
    return 0;
  }

  @Override
  default void close() {}

  /** The miner of the configured sampler, or null when the shards mine nothing. */
  static HardNegativeMiner of(ShardSettings settings, Counter samplingGaveUp) {
    return switch (settings.sampler().mining) {
      case SHARD_TREE -> TreeMiner.of(settings, samplingGaveUp);
      case SHARD_POOL -> new PoolMiner(settings);
      default -> null;
    };
  }

  /** Collects a {@link Mined} result. */
  final class Collected {
    private final List<Integer> queryOf = new ArrayList<>();
    private final List<TargetFeatures> targets = new ArrayList<>();
    long proposals;
    long accepted;

    void add(int query, TargetFeatures target) {
      queryOf.add(query);
      targets.add(target);
    }

    Mined result() {
      return new Mined(queryOf, targets, proposals, accepted);
    }
  }
}
