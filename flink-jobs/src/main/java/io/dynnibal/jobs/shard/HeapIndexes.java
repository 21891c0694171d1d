package io.dynnibal.jobs.shard;

import io.dynnibal.state.ShardIndex;
import io.dynnibal.state.ShardTargets;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SG trees of one subtask's shard keys ({@link ShardIndex}): heap caches of the keys' state
 * ({@link ShardTargets}), which is the truth. A key's tree is rebuilt from the state on its first
 * use after a start or restore: from the shape its checkpoint kept ({@link TreeShapes}) when there
 * is a usable one, else in bulk; an exact re-encode replaces it by a tree built from the vectors it
 * writes.
 *
 * <p>Invariant: a key's tree holds the key's encoded targets that its pool ({@link TargetPool})
 * admits at the key's model version; a target still waiting to be encoded joins when it is.
 */
final class HeapIndexes {
  private static final Logger LOG = LoggerFactory.getLogger(HeapIndexes.class);

  private final ShardSettings settings;
  private final ShardTargets targets;
  private final TargetPool pool;
  private final TreeShapes shapes;
  private final ShardMetrics metrics;
  private final Map<Integer, ShardIndex> indexes = new HashMap<>();

  HeapIndexes(
      ShardSettings settings,
      ShardTargets targets,
      TargetPool pool,
      TreeShapes shapes,
      ShardMetrics metrics) {
    this.settings = settings;
    this.targets = targets;
    this.pool = pool;
    this.shapes = shapes;
    this.metrics = metrics;
  }

  /** The tree of {@code key}; null when none is built yet. */
  ShardIndex get(int key) {
    return indexes.get(key);
  }

  /**
   * The tree of the current key {@code key} at model version {@code version}, rebuilt from the
   * key's state when missing.
   *
   * @param waiting takes the targets stored but not encoded before a restore: they are encoded (and
   *     dead-lettered if unusable) like any new target
   */
  ShardIndex of(int key, long version, Consumer<String> waiting) throws Exception {
    ShardIndex index = indexes.get(key);
    if (index == null) {
      long start = System.nanoTime();
      ShardTargets.Indexed state = targets.indexedVectors(version, pool.at(version), waiting);
      long read = System.nanoTime();
      Built built = restored(key, state);
      if (built == null) {
        built =
            new Built(
                ShardIndex.build(
                    settings.landmarks(),
                    settings.treeBase(),
                    state.ids(),
                    state.vectors(),
                    seed(key)),
                "in bulk");
      }
      index = built.index();
      put(key, index);
      if (index.size() > 0) {
        logBuilt(key, built, start, read);
      }
    }
    return index;
  }

  /** A tree rebuilt from the state, and how its targets were placed. */
  private record Built(ShardIndex index, String how) {}

  /** The key's tree from its checkpointed shape; null when there is no usable one. */
  private Built restored(int key, ShardTargets.Indexed state) {
    byte[] shape = shapes.take(key);
    if (shape == null) {
      return null;
    }
    try {
      ShardIndex.Restored restored =
          ShardIndex.restore(
              settings.landmarks(),
              settings.treeBase(),
              state.ids(),
              state.vectors(),
              seed(key),
              shape);
      metrics.treeFromShape();
      return new Built(
          restored.index(),
          String.format(
              "from its checkpointed shape (%d targets placed, %d inserted, %d moved by the"
                  + " repair)",
              restored.placed(), restored.inserted(), restored.repair().targetsMoved()));
    } catch (IllegalArgumentException e) {
      LOG.warn("shard key {}: its checkpointed tree shape is unusable, building in bulk", key, e);
      return null;
    }
  }

  /** How long a restored key waits for its tree before it answers its first batch. */
  private void logBuilt(int key, Built built, long start, long read) {
    double millis = (System.nanoTime() - start) / 1e6;
    metrics.treeBuilt(millis);
    LOG.info(
        "shard key {}: SG tree built from state {}: {} targets in {} ms ({} ms reading the state)",
        key,
        built.how(),
        built.index().size(),
        Math.round(millis),
        (read - start) / 1_000_000);
  }

  /** Replaces the key's tree {@code old} by {@code fresh}. */
  void replace(int key, ShardIndex old, ShardIndex fresh) {
    drop(key, old);
    put(key, fresh);
  }

  /** The seed of the key's trees. */
  long seed(int key) {
    return settings.seed() ^ key;
  }

  private void drop(int key, ShardIndex index) {
    indexes.remove(key);
    metrics.indexed(-index.size());
  }

  private void put(int key, ShardIndex index) {
    indexes.put(key, index);
    metrics.indexed(index.size());
  }

  /**
   * Saves every key's tree shape for the checkpoint being taken.
   *
   * @param waiting per key, targets stored and not encoded yet
   */
  void saveShapes(Map<Integer, ? extends Set<String>> waiting) throws Exception {
    shapes.save(indexes, waiting);
  }

  /** Says when adding {@code what} made the index apply its frame to every vector. */
  static void logFlattened(int key, ShardIndex index, long before, String what) {
    if (index.framesFlattened() > before) {
      LOG.info(
          "shard key {}: {} lies beyond the tree's frame: the tree's vectors were moved to current"
              + " coordinates and the tree repaired",
          key,
          what);
    }
  }
}
