package io.dynnibal.jobs.shard;

import io.dynnibal.state.ExactRefinement;
import io.dynnibal.state.ShardIndex;
import io.dynnibal.state.ShardTargets;
import io.dynnibal.state.TargetFeatures;
import java.util.HashSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The exact re-encode that follows an update applied by its map first ({@link
 * Migration#MAP_THEN_EXACT}): one group of the key's targets per answered batch ({@code
 * reencode.exact.per.batch}), through {@link ExactRefinement}. The state takes each exact vector at
 * once; the index holds it aside ({@link ShardIndex#stage}) and the tree keeps serving the update's
 * map until the last group is in, then a tree is built from the exact vectors. (Inserting each
 * vector as it came would cost a delete and an insert per target, leave most nodes hollow, and on a
 * singular map have the whole tree moved and repaired at the first vector beyond the frame.)
 */
final class GradualReencode {
  private static final Logger LOG = LoggerFactory.getLogger(GradualReencode.class);

  private final ShardSettings settings;
  private final ShardTargets targets;
  private final ExactRefinement refinement;
  private final HeapIndexes indexes;

  /**
   * Keys that answer one batch at an exact update's version before their pass takes its first
   * group: the merge needs every shard at the version, and a shard that took the update a batch
   * after another would otherwise answer its first batch behind the other's first group.
   */
  private final Set<Integer> startsAfterNextBatch = new HashSet<>();

  GradualReencode(
      ShardSettings settings,
      ShardTargets targets,
      ExactRefinement refinement,
      HeapIndexes indexes) {
    this.settings = settings;
    this.targets = targets;
    this.refinement = refinement;
    this.indexes = indexes;
  }

  /**
   * The current key's targets encoded before {@code version} are due; the first group is taken
   * after the second batch the key answers at {@code version}.
   */
  void start(int key, long version) throws Exception {
    refinement.start(key, version);
    startsAfterNextBatch.add(key);
    LOG.info(
        "shard key {}: model update {} is exact: applied its map first, every target now"
            + " re-encoded exactly, {} per batch",
        key,
        version,
        settings.reencodeExactPerBatch());
  }

  /** Nothing of the current key is due: it was re-encoded in full. */
  void cancel(int key) throws Exception {
    refinement.cancel(key);
    startsAfterNextBatch.remove(key);
  }

  /**
   * One group of the current key's pass, if one is due, after a batch was answered (not the first
   * at the update's version); the key's tree is replaced when the pass is complete.
   */
  void afterBatch(int key, ShardIndex index, ShardModel model) throws Exception {
    if (!refinement.pending() || startsAfterNextBatch.remove(key)) {
      return;
    }
    ExactRefinement.Step step =
        refinement.step(
            key,
            targets,
            settings.reencodeExactPerBatch(),
            g -> TargetIndexer.encode(model, g),
            model.version);
    for (TargetFeatures t : step.reencoded()) {
      if (index.contains(t.id)) {
        index.stage(t.id, t.cache);
      }
    }
    if (step.finished()) {
      finish(key, index, model, step);
    }
  }

  private void finish(int key, ShardIndex index, ShardModel model, ExactRefinement.Step step) {
    long start = System.nanoTime();
    int staged = index.stagedCount();
    ShardIndex exact = index.rebuilt(indexes.seed(key));
    indexes.replace(key, index, exact);
    LOG.info(
        "shard key {}: every target exact at model version {}: {} re-encoded over {} batches, {}"
            + " ms in all; the tree built from {} exact vectors of {} in {} ms",
        key,
        model.version,
        step.reencodedSoFar(),
        step.stepsSoFar(),
        step.nanosSoFar() / 1_000_000,
        staged,
        exact.size(),
        (System.nanoTime() - start) / 1_000_000);
  }
}
