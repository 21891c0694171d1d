package io.dynnibal.jobs.shard;

import io.dynnibal.index.nystrom.CacheMap;
import io.dynnibal.index.sgtree.TreeRepair;
import io.dynnibal.schemas.DeadLetter;
import io.dynnibal.schemas.Matrices;
import io.dynnibal.schemas.ModelUpdate;
import io.dynnibal.state.CacheMigration;
import io.dynnibal.state.ShardIndex;
import io.dynnibal.state.ShardTargets;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.state.TreeFrame;
import io.dynnibal.stream.DeadLetters;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves a shard key to a model update's version: the paper's ApproximateReEncode followed by
 * UpdateSGTree. The update's model (encoder snapshot and Nyström projection, {@link ShardModel}) is
 * loaded; then, as {@link Migration#of} decides, the key's cached vectors are moved by the update's
 * cache map (a d'xd' regression fitted by the trainer) and its tree moved in place and repaired
 * ({@link CacheMigration}, {@link ShardIndex#move}), or every target is re-encoded exactly and the
 * tree rebuilt from the new vectors.
 *
 * <p>Contract: an update whose version is not above the key's is a duplicate and changes nothing;
 * one of an older trainer generation than the key's update is refused with a dead letter (fencing);
 * an update whose model cannot be loaded leaves the key at its version, with a dead letter (a later
 * update is applied exactly). Otherwise the key's state, tree and pool are at the update's version
 * when {@link #apply} returns true, except what a {@link GradualReencode} pass still has due.
 */
final class ModelUpdateApplier {
  private static final Logger LOG = LoggerFactory.getLogger(ModelUpdateApplier.class);

  private final ShardSettings settings;
  private final ShardTargets targets;
  private final LoadedModels models;
  private final HeapIndexes indexes;
  private final TargetPool pool;
  private final GradualReencode exactPass;
  private final ShardMetrics metrics;

  ModelUpdateApplier(
      ShardSettings settings,
      ShardTargets targets,
      LoadedModels models,
      HeapIndexes indexes,
      TargetPool pool,
      GradualReencode exactPass,
      ShardMetrics metrics) {
    this.settings = settings;
    this.targets = targets;
    this.models = models;
    this.indexes = indexes;
    this.pool = pool;
    this.exactPass = exactPass;
    this.metrics = metrics;
  }

  /** How long an update took to reach the key, to load and to apply. */
  private record Timing(long receivedMs, long loadMillis, long applyMillis) {}

  /**
   * Moves the current key {@code key}, at {@code current} (null: version 0), to {@code update}'s
   * version; returns whether it did (the caller then records {@code update} as the key's).
   */
  boolean apply(ModelUpdate update, ModelUpdate current, int key, Consumer<DeadLetter> deadLetters)
      throws Exception {
    long currentVersion = current == null ? 0 : current.getVersion();
    if (update.getVersion() <= currentVersion) {
      ignore(update, key, currentVersion);
      return false;
    }
    if (current != null && update.getGeneration() < current.getGeneration()) {
      fence(update, current, key, deadLetters);
      return false;
    }
    // The trainer stamps an update as it emits it.
    long receivedMs = System.currentTimeMillis() - update.getCreatedMs();
    long loading = System.nanoTime();
    ShardModel next = load(update, key, deadLetters);
    if (next == null) {
      return false;
    }
    long loadMillis = (System.nanoTime() - loading) / 1_000_000;
    ShardIndex index = indexes.get(key);
    Migration migration = Migration.of(update, currentVersion, settings.reencodeExactPerBatch());
    long start = System.nanoTime();
    CacheMigration.Outcome outcome = migrate(key, index, update, currentVersion, next, migration);
    Timing timing = new Timing(receivedMs, loadMillis, (System.nanoTime() - start) / 1_000_000);
    report(key, update.getVersion(), migration, index, outcome, timing);
    if (migration != Migration.EXACT && index != null) {
      pool.rotateUnnamed(key, index, update.getVersion());
    }
    metrics.updatesApplied.inc();
    return true;
  }

  private void ignore(ModelUpdate update, int key, long currentVersion) {
    metrics.duplicateUpdates.inc();
    LOG.info(
        "shard key {}: ignoring model update {}: it already holds version {}",
        key,
        update.getVersion(),
        currentVersion);
  }

  /**
   * Refuses an update of a trainer that a later one superseded (a paused or partitioned trainer
   * that Flink replaced): applying it would move the key back onto a branch the job discarded.
   */
  private void fence(
      ModelUpdate update, ModelUpdate current, int key, Consumer<DeadLetter> deadLetters) {
    metrics.duplicateUpdates.inc();
    deadLetters.accept(
        DeadLetters.ofDecoded(
            settings.modelUpdatesTopic(),
            "model-" + update.getVersion() + "-key-" + key,
            "model update "
                + update.getVersion()
                + " is of trainer generation "
                + update.getGeneration()
                + ", older than generation "
                + current.getGeneration()
                + " whose update "
                + current.getVersion()
                + " shard key "
                + key
                + " holds: a superseded trainer's, refused",
            ShardIndexFunction.STAGE));
  }

  /** The update's model; null, with a dead letter, when it cannot be loaded. */
  private ShardModel load(ModelUpdate update, int key, Consumer<DeadLetter> deadLetters) {
    try {
      return models.at(update);
    } catch (RuntimeException e) {
      deadLetters.accept(
          DeadLetters.ofDecoded(
              settings.modelUpdatesTopic(),
              "model-" + update.getVersion() + "-key-" + key,
              "cannot load model update " + update.getVersion() + ": " + e.getMessage(),
              ShardIndexFunction.STAGE));
      return null;
    }
  }

  /**
   * Moves the key's state (and tree, if built) to the update's version. An exact re-encode rewrites
   * every vector: when there is a tree to replace, it is built again from the vectors as they are
   * written, in the state's order (the tree a rebuild from the state would give); without one, the
   * next batch builds it from the state and collects the targets still waiting to be encoded.
   */
  private CacheMigration.Outcome migrate(
      int key,
      ShardIndex index,
      ModelUpdate update,
      long currentVersion,
      ShardModel next,
      Migration migration)
      throws Exception {
    CacheMap map =
        migration == Migration.EXACT
            ? null
            : new CacheMap(
                update.getCacheMap().getRows(), Matrices.values(update.getCacheMap(), "cache map"));
    boolean rebuild = map == null && index != null;
    ExactVectors exact = new ExactVectors(rebuild ? pool.at(update.getVersion()) : id -> false);
    CacheMigration.Outcome outcome =
        CacheMigration.apply(
            targets,
            index,
            currentVersion,
            update.getVersion(),
            map,
            group -> exact.encode(next, group),
            settings.seed() ^ update.getVersion());
    if (migration == Migration.MAP_THEN_EXACT) {
      exactPass.start(key, update.getVersion());
    }
    if (map == null) {
      exactPass.cancel(key);
      if (rebuild) {
        indexes.replace(
            key,
            index,
            ShardIndex.build(
                settings.landmarks(),
                settings.treeBase(),
                exact.ids,
                exact.vectors,
                indexes.seed(key)));
      }
    }
    return outcome;
  }

  /** The vectors of an exact re-encode that the new version's pool admits, in the state's order. */
  private static final class ExactVectors {
    final Predicate<String> indexed;
    final List<String> ids = new ArrayList<>();
    final List<float[]> vectors = new ArrayList<>();

    ExactVectors(Predicate<String> indexed) {
      this.indexed = indexed;
    }

    void encode(ShardModel next, List<TargetFeatures> group) {
      TargetIndexer.encode(next, group);
      for (TargetFeatures t : group) {
        if (indexed.test(t.id)) {
          ids.add(t.id);
          vectors.add(t.cache.clone());
        }
      }
    }
  }

  /** Logs how the key moved; counts the targets a repair moved. */
  private void report(
      int key,
      long version,
      Migration migration,
      ShardIndex index,
      CacheMigration.Outcome outcome,
      Timing timing) {
    if (migration == Migration.EXACT) {
      LOG.info(
          "shard key {}: re-encoded {} targets exactly for model update {} after batch {} in {} ms"
              + " (received {} ms after it was made, its snapshot loaded in {} ms){}",
          key,
          outcome.targetsMoved(),
          version,
          metrics.lastBatchAnswered(),
          timing.applyMillis(),
          timing.receivedMs(),
          timing.loadMillis(),
          index != null ? ", the tree built from the new vectors included" : "");
    } else if (outcome.index() != null && outcome.index().byFrame()) {
      LOG.info(
          "{}: {} targets, by the tree's frame (distortion {})",
          applied(key, version, timing),
          index.size(),
          String.format("%.2f", outcome.index().distortion()));
    } else if (outcome.index() != null) {
      TreeRepair.Report repair = outcome.index().repair();
      metrics.targetsRepaired.inc(repair.targetsMoved());
      LOG.info(
          "{}: {} targets, frame distortion {} past {}: vectors moved, {} subtrees rebuilt, {}"
              + " targets re-inserted",
          applied(key, version, timing),
          repair.targets(),
          String.format("%.2f", outcome.index().distortion()),
          TreeFrame.MAX_DISTORTION,
          repair.subtreesRebuilt(),
          repair.targetsMoved());
    }
  }

  /** The start of the log line of an update applied by its map. */
  private String applied(int key, long version, Timing timing) {
    return String.format(
        "shard key %d: applied model update %d after batch %d in %d ms (received %d ms after it"
            + " was made, its snapshot loaded in %d ms)",
        key,
        version,
        metrics.lastBatchAnswered(),
        timing.applyMillis(),
        timing.receivedMs(),
        timing.loadMillis());
  }
}
