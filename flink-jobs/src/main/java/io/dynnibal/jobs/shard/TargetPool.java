package io.dynnibal.jobs.shard;

import io.dynnibal.negatives.NegativesPool;
import io.dynnibal.state.NamedPositives;
import io.dynnibal.state.ShardIndex;
import io.dynnibal.state.ShardTargets;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.QueryBatch;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which of a shard key's stored targets its index holds ({@code negatives.pool}, {@code
 * negatives.unnamed.share}). Under {@code all}, every encoded target. Under {@code positives}, the
 * targets some pair has named so far ({@link NamedPositives}) and, per model version, the unnamed
 * targets of that version's share; the state keeps every target either way, the index only the
 * pool.
 */
final class TargetPool {
  private static final Logger LOG = LoggerFactory.getLogger(TargetPool.class);

  private final ShardSettings settings;
  private final int shards;
  private final ShardTargets targets;
  private final NamedPositives named;
  private final ShardMetrics metrics;

  TargetPool(
      ShardSettings settings,
      int shards,
      ShardTargets targets,
      NamedPositives named,
      ShardMetrics metrics) {
    this.settings = settings;
    this.shards = shards;
    this.targets = targets;
    this.named = named;
    this.metrics = metrics;
  }

  /** Whether the index holds only the pool ({@code negatives.pool=positives}). */
  boolean positivesOnly() {
    return settings.negativesPool() == NegativesPool.POSITIVES;
  }

  /** Whether target {@code id}, just encoded, joins the index at {@code version}. */
  boolean admits(String id, long version) throws Exception {
    return !positivesOnly() || named.contains(id) || unnamedAdmitted(id, version);
  }

  /** The pool at model version {@code version}, as a predicate over the key's target ids. */
  Predicate<String> at(long version) throws Exception {
    if (!positivesOnly()) {
      return id -> true;
    }
    Set<String> namedIds = named.all();
    return id -> namedIds.contains(id) || unnamedAdmitted(id, version);
  }

  /** Whether an unnamed target is in a {@code positives} pool at {@code version}. */
  private boolean unnamedAdmitted(String id, long version) {
    return settings.unnamedShare().admits(id, version);
  }

  /**
   * Under {@code negatives.pool=positives}, the batch's positives this key owns are named ({@link
   * NamedPositives}) and those it stores join its index before the batch is answered: the pool is
   * every target a pair has named so far. A named target that arrives later joins when it is
   * encoded.
   *
   * @param shard the shard number of {@code key}
   */
  void admitPositives(int key, int shard, ShardIndex index, QueryBatch batch, long version)
      throws Exception {
    if (!positivesOnly()) {
      return;
    }
    List<String> notIndexed = new ArrayList<>();
    for (String id : batch.targetIds) {
      // Only the owner shard stores a target (DecodeTargets routes by the same hash).
      if (ShardKeys.shardOf(id, shards) == shard && !index.contains(id)) {
        notIndexed.add(id);
      }
    }
    List<String> first = notIndexed.isEmpty() ? List.of() : named.name(notIndexed);
    if (!first.isEmpty()) {
      join(key, index, first, version, "a newly named positive's vector");
    }
  }

  /**
   * After a model update moved the key's tree in place (a map), the unnamed targets of the new
   * version's share replace the previous version's ({@code negatives.unnamed.share}); an exact
   * update builds its tree with the new share instead ({@link #at}).
   */
  void rotateUnnamed(int key, ShardIndex index, long version) throws Exception {
    if (!positivesOnly() || settings.unnamedShare().share() <= 0) {
      return;
    }
    long start = System.nanoTime();
    Predicate<String> inPool = at(version);
    List<String> joining = new ArrayList<>();
    int left = 0;
    for (String id : targets.ids()) {
      if (inPool.test(id)) {
        if (!index.contains(id)) {
          joining.add(id);
        }
      } else if (index.delete(id)) {
        metrics.indexed(-1);
        left++;
      }
    }
    int joined = join(key, index, joining, version, "an unnamed target's vector");
    LOG.info(
        "shard key {}: model update {}: the pool swapped shares: {} unnamed targets left, {} joined, in {} ms",
        key,
        version,
        left,
        joined,
        (System.nanoTime() - start) / 1_000_000);
  }

  /**
   * Inserts the stored vectors of {@code ids} at {@code version} into the index; a target not
   * encoded yet joins when it is. Returns how many joined.
   */
  private int join(int key, ShardIndex index, List<String> ids, long version, String what)
      throws Exception {
    int joined = 0;
    long flattened = index.framesFlattened();
    for (TargetFeatures t : targets.shippedWithCache(ids, version)) {
      if (t.cache != null) {
        index.upsert(t.id, t.cache);
        metrics.indexed(1);
        joined++;
      }
    }
    HeapIndexes.logFlattened(key, index, flattened, what);
    return joined;
  }
}
