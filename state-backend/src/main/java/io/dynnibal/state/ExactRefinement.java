package io.dynnibal.state;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;

/**
 * An exact re-encode taken off a shard's critical path. When the trainer marks an update exact (its
 * map is unfaithful, or the landmarks are new) and the update's map still leads from the shard's
 * version, the shard applies the map at once (cheap: {@link CacheMigration}), so the next batch is
 * mined at the new version, and then re-encodes its targets exactly a group per batch until none is
 * left at a base before the update's, each into its state and staged in its heap index ({@code
 * ShardIndex#stage}), whose tree is built from the exact vectors once the last group is in.
 * Re-encoding every target and rebuilding the tree at once would keep the shard from answering
 * batches, and hold every checkpoint, for as long as the whole re-encode takes.
 *
 * <p>What is due survives a restore: per key, the version before whose bases targets are due is
 * state; the list of due ids is heap, read again from the state on first use. A later update moves
 * what is still due by its map like every other target, and the refinement goes on with the model
 * current then (exact at a newer version is what is wanted). A later exact update restarts it.
 */
public final class ExactRefinement {
  public static final ValueStateDescriptor<Long> DUE_BEFORE =
      new ValueStateDescriptor<>("exact-due-before", Types.LONG);

  /**
   * What one step re-encoded, for the heap index, whether the key has nothing left due, and the
   * refinement's totals so far in this process (for its log): targets, steps and the time they
   * took.
   */
  public record Step(
      List<TargetFeatures> reencoded,
      boolean finished,
      long reencodedSoFar,
      int stepsSoFar,
      long nanosSoFar) {}

  /** A key's refinement in this process: the ids still due, and what it has done. */
  private static final class Progress {
    final Deque<String> due;
    long reencoded;
    int steps;
    long nanos;

    Progress(List<String> due) {
      this.due = new ArrayDeque<>(due);
    }
  }

  private final ValueState<Long> dueBefore;
  private final Map<Integer, Progress> progress = new HashMap<>();

  public ExactRefinement(ValueState<Long> dueBefore) {
    this.dueBefore = dueBefore;
  }

  /** The current key's targets at a base before {@code version} are due (the key's update). */
  public void start(int key, long version) throws Exception {
    dueBefore.update(version);
    progress.remove(key);
  }

  /** Nothing of the current key is due (it was re-encoded in full). */
  public void cancel(int key) throws Exception {
    dueBefore.clear();
    progress.remove(key);
  }

  public boolean pending() throws Exception {
    return dueBefore.value() != null;
  }

  /**
   * Re-encodes up to {@code groupSize} due targets of the current key (every one when it is 0) with
   * {@code exact} at {@code currentVersion}; empty and not finished when nothing is due.
   */
  public Step step(
      int key,
      ShardTargets targets,
      int groupSize,
      ShardTargets.ExactEncoder exact,
      long currentVersion)
      throws Exception {
    Long before = dueBefore.value();
    if (before == null) {
      return new Step(List.of(), false, 0, 0, 0);
    }
    long start = System.nanoTime();
    Progress p = progress.get(key);
    if (p == null) {
      p = new Progress(targets.idsEncodedBefore(before));
      progress.put(key, p);
    }
    // 0: all at once (a key restored with a refinement due under a setting that now says 0).
    int n = groupSize > 0 ? groupSize : p.due.size();
    List<String> group = new ArrayList<>(n);
    while (group.size() < n && !p.due.isEmpty()) {
      group.add(p.due.poll());
    }
    List<TargetFeatures> reencoded = targets.reencodeSome(group, before, exact, currentVersion);
    p.reencoded += reencoded.size();
    p.steps++;
    p.nanos += System.nanoTime() - start;
    boolean finished = p.due.isEmpty();
    if (finished) {
      cancel(key);
    }
    return new Step(reencoded, finished, p.reencoded, p.steps, p.nanos);
  }
}
