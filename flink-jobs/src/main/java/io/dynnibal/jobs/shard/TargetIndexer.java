package io.dynnibal.jobs.shard;

import io.dynnibal.index.VectorMath;
import io.dynnibal.model.features.Features;
import io.dynnibal.schemas.DeadLetter;
import io.dynnibal.state.ShardIndex;
import io.dynnibal.state.ShardTargets;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.DeadLetters;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.flink.streaming.api.TimerService;

/**
 * Targets joining, changing and leaving a shard key. A new or changed target is stored at once
 * (text, no cache vector yet) and encoded with the key's model in a group of up to {@value
 * #ENCODE_BATCH}: before the key answers a batch, when a group is full, or {@value
 * #ENCODE_DELAY_MS} ms after the first one waiting. One forward pass per group instead of per
 * target is what makes indexing fast; a restore encodes whatever was still waiting in its state.
 *
 * <p>A target's cache vector is its Nyström projection at the version that encoded it ({@link
 * ShardModel#targetCaches}); one that encodes to a non-finite vector leaves the shard, with a dead
 * letter.
 */
final class TargetIndexer {
  /** Targets encoded per forward pass. */
  static final int ENCODE_BATCH = 512;

  /** How long the first waiting target waits for a group to fill. */
  static final long ENCODE_DELAY_MS = 200;

  private final ShardSettings settings;
  private final ShardTargets targets;
  private final TargetPool pool;
  private final ShardMetrics metrics;

  /** Per shard key, targets stored without a cache vector yet, in arrival order. */
  private final Map<Integer, LinkedHashSet<String>> waiting = new HashMap<>();

  TargetIndexer(
      ShardSettings settings, ShardTargets targets, TargetPool pool, ShardMetrics metrics) {
    this.settings = settings;
    this.targets = targets;
    this.pool = pool;
    this.metrics = metrics;
  }

  /** Stores target {@code id} of the current key and has it wait for its group. */
  void upsert(
      int key,
      ShardIndex index,
      ShardModel model,
      String id,
      String text,
      TimerService timers,
      Consumer<DeadLetter> deadLetters)
      throws Exception {
    targets.store(id, text, model.version);
    LinkedHashSet<String> group = waiting.computeIfAbsent(key, k -> new LinkedHashSet<>());
    if (group.isEmpty()) {
      timers.registerProcessingTimeTimer(timers.currentProcessingTime() + ENCODE_DELAY_MS);
    }
    group.add(id);
    if (group.size() >= ENCODE_BATCH) {
      encodeWaiting(key, index, model, deadLetters);
    }
  }

  /** Removes target {@code id} from the current key's state, its waiting group and its index. */
  void delete(int key, ShardIndex index, String id, long version) throws Exception {
    targets.remove(id, version);
    Set<String> waitingOfKey = waiting.get(key);
    if (waitingOfKey != null) {
      waitingOfKey.remove(id);
    }
    if (index.delete(id)) {
      metrics.indexed(-1);
    }
  }

  /**
   * Encodes the key's waiting targets with {@code model} in one pass, then indexes those of the
   * pool.
   */
  void encodeWaiting(int key, ShardIndex index, ShardModel model, Consumer<DeadLetter> deadLetters)
      throws Exception {
    List<TargetFeatures> group = takeWaiting(key);
    if (group == null) {
      return;
    }
    List<TargetFeatures> usable = new ArrayList<>(group.size());
    long flattened = index.framesFlattened();
    for (TargetFeatures t : encode(model, group)) {
      if (VectorMath.isFinite(t.cache)) {
        usable.add(t);
        insert(index, t, model.version);
      } else {
        evict(index, t, model.version, deadLetters);
      }
    }
    targets.encoded(usable, model.version);
    HeapIndexes.logFlattened(key, index, flattened, "a new target's vector");
  }

  /** The key's waiting targets still without a cache vector; null when none was waiting. */
  private List<TargetFeatures> takeWaiting(int key) throws Exception {
    LinkedHashSet<String> ids = waiting.get(key);
    if (ids == null || ids.isEmpty()) {
      return null;
    }
    List<TargetFeatures> group = new ArrayList<>(ids.size());
    for (String id : ids) {
      TargetFeatures t = targets.withFeatures(id);
      if (t != null && t.cache == null) {
        group.add(t);
      }
    }
    ids.clear();
    return group;
  }

  /**
   * Inserts one encoded target into the tree, one by one: the tree grows by insertion rather than
   * by a bulk build over the grown set, whose trees sample slower.
   */
  private void insert(ShardIndex index, TargetFeatures t, long version) throws Exception {
    boolean isNew = !index.contains(t.id);
    if (pool.admits(t.id, version)) {
      index.upsert(t.id, t.cache);
      if (isNew) {
        metrics.indexed(1);
      }
    }
  }

  private void evict(
      ShardIndex index, TargetFeatures t, long version, Consumer<DeadLetter> deadLetters)
      throws Exception {
    targets.remove(t.id, version);
    if (index.delete(t.id)) {
      metrics.indexed(-1);
    }
    String why =
        "target "
            + t.id
            + " encodes to a non-finite vector at model version "
            + version
            + "; it is not in the index";
    deadLetters.accept(
        DeadLetters.ofDecoded(settings.targetsTopic(), t.id, why, ShardIndexFunction.STAGE));
  }

  /** Collects a target stored but not encoded of key {@code key} (a restore's leftovers). */
  Consumer<String> waitingOf(int key) {
    return id -> waiting.computeIfAbsent(key, k -> new LinkedHashSet<>()).add(id);
  }

  /** Per key, the targets stored and waiting to be encoded. */
  Map<Integer, ? extends Set<String>> waiting() {
    return waiting;
  }

  /**
   * Sets the cache vector of each target at {@code with}'s version, in forward passes of {@value
   * #ENCODE_BATCH}; returns {@code group}.
   */
  static List<TargetFeatures> encode(ShardModel with, List<TargetFeatures> group) {
    for (int from = 0; from < group.size(); from += ENCODE_BATCH) {
      List<TargetFeatures> part = group.subList(from, Math.min(group.size(), from + ENCODE_BATCH));
      float[][] caches = with.targetCaches(part.stream().map(Features::of).toList());
      for (int i = 0; i < part.size(); i++) {
        part.get(i).cache = caches[i];
        part.get(i).version = with.version;
      }
    }
    return group;
  }
}
