package io.dynnibal.negatives;

import java.io.Serializable;

/**
 * Which of the targets no training pair has named join the pool of negatives under {@code
 * negatives.pool=positives} ({@code negatives.unnamed.share}): each such target with probability
 * {@code share}, drawn anew for every model version, so that over a run each one is a candidate
 * negative about {@code share} of the time. Named targets are always in the pool.
 *
 * <p>Why between the two pools: a target no pair names only ever takes the negative's side of the
 * loss. Under {@code all} that pushes down targets an evaluation may ask for (a split by target,
 * cold-start items); under {@code positives} nothing pushes down the distractors a catalogue is
 * full of. A small share keeps both effects mild: the unnamed targets still learn to score below
 * the named ones, at a rate that does not swamp the positives' signal. That held for uniform
 * negatives on both bundled corpora, not for DyNNIBAL's hard negatives on WordNet, whose hard
 * distractors a share pushes down only that share of the time (docs/experiments.md).
 *
 * <p>The draw is a hash of the target id, the version and the seed: every shard (and every restore)
 * admits the same targets for a version without state or coordination, and a version's share is
 * independent of the previous one's.
 */
public final class UnnamedShare implements Serializable {
  private static final long serialVersionUID = 1L;

  private final double share;
  private final long seed;

  public UnnamedShare(double share, long seed) {
    if (!(share >= 0 && share <= 1)) {
      throw new IllegalArgumentException("the unnamed share must be in [0, 1], got " + share);
    }
    this.share = share;
    this.seed = seed;
  }

  /** The share (0: only named targets; 1: every target). */
  public double share() {
    return share;
  }

  /** Whether the pool of model version {@code version} holds unnamed target {@code id}. */
  public boolean admits(String id, long version) {
    if (share <= 0) {
      return false;
    }
    if (share >= 1) {
      return true;
    }
    long h = mix(mix(seed ^ 0x5DEECE66DL) ^ version);
    h = mix(h ^ id.hashCode());
    // The top 53 bits as a uniform double in [0, 1).
    return (h >>> 11) * 0x1.0p-53 < share;
  }

  /**
   * SplitMix64's finaliser: a bijection of the long whose every output bit depends on every input.
   */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
