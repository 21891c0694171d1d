package io.dynnibal.trainer;

import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * How long a model update takes to reach every shard: the steps and milliseconds from emitting
 * version v to the first batch that every shard sampled with v or newer. Also remembers, per
 * checkpoint, the newest version every shard held, which is what allows deleting older versions
 * once that checkpoint completes.
 */
final class FeedbackTracker {
  /** Emitted versions remembered for latency (the newest ones). */
  static final int REMEMBERED = 64;

  private final LongSupplier clockMs;
  private final TreeMap<Long, long[]> emitted = new TreeMap<>(); // version -> {step, epoch ms}
  private final TreeMap<Long, Long> versionEverywhereAtCheckpoint = new TreeMap<>();
  private long versionEverywhere;
  private long latencySteps = -1;
  private double latencyMs = -1;

  FeedbackTracker(LongSupplier clockMs) {
    this.clockMs = clockMs;
  }

  /** Version {@code version} left the trainer at {@code step}. */
  void emitted(long version, long step) {
    emitted.put(version, new long[] {step, clockMs.getAsLong()});
    while (emitted.size() > REMEMBERED) {
      emitted.pollFirstEntry();
    }
  }

  /** The step {@code version} was emitted at (0 for version 0 or one forgotten). */
  long stepOf(long version) {
    long[] e = emitted.get(version);
    return e == null ? 0 : e[0];
  }

  /**
   * A batch trained at {@code step} was sampled by shards that all hold {@code everywhere}.
   *
   * @return whether that measured a new latency (a version newer than any before, one this tracker
   *     saw emitted)
   */
  boolean observed(long everywhere, long step) {
    if (everywhere <= versionEverywhere) {
      return false;
    }
    versionEverywhere = everywhere;
    long[] e = emitted.get(everywhere);
    if (e == null) {
      return false;
    }
    latencySteps = step - e[0];
    latencyMs = clockMs.getAsLong() - e[1];
    return true;
  }

  /** The newest version every shard has answered with (the re-encode cycles completed). */
  long versionEverywhere() {
    return versionEverywhere;
  }

  /** Steps of the last measured feedback latency, or null before the first. */
  Long latencySteps() {
    return latencySteps < 0 ? null : latencySteps;
  }

  /** Milliseconds of the last measured feedback latency, or null before the first. */
  Double latencyMs() {
    return latencyMs < 0 ? null : latencyMs;
  }

  /** Remembers what every shard held when checkpoint {@code id} was taken. */
  void checkpointTaken(long id) {
    versionEverywhereAtCheckpoint.put(id, versionEverywhere);
  }

  /**
   * Checkpoint {@code id} completed: returns the oldest version a restore from it or any later one
   * can need (every shard held at least the version recorded for it, and one more is kept as a
   * margin), or 0 when nothing may be deleted.
   */
  long checkpointCompleted(long id) {
    Long everywhere = versionEverywhereAtCheckpoint.get(id);
    versionEverywhereAtCheckpoint.headMap(id, true).clear();
    return everywhere != null && everywhere > 1 ? everywhere - 1 : 0;
  }

  void save(TrainerCheckpoint c) {
    c.lastVersionEverywhere = versionEverywhere;
    c.feedbackSteps = latencySteps;
    c.feedbackMs = latencyMs;
    c.emittedVersions = emitted.keySet().stream().mapToLong(Long::longValue).toArray();
    c.emittedSteps = emitted.values().stream().mapToLong(e -> e[0]).toArray();
    c.emittedMs = emitted.values().stream().mapToLong(e -> e[1]).toArray();
  }

  void restore(TrainerCheckpoint c) {
    versionEverywhere = c.lastVersionEverywhere;
    latencySteps = c.feedbackSteps;
    latencyMs = c.feedbackMs;
    for (int i = 0; c.emittedVersions != null && i < c.emittedVersions.length; i++) {
      emitted.put(c.emittedVersions[i], new long[] {c.emittedSteps[i], c.emittedMs[i]});
    }
  }

  /** For tests: the remembered versions. */
  Map<Long, long[]> emittedVersions() {
    return emitted;
  }
}
