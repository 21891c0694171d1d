package io.dynnibal.jobs.config;

import io.dynnibal.settings.Setting;
import java.io.Serializable;

/**
 * The re-encoding settings group: how often the shards get new parameters (the paper's w), and when
 * a cycle re-encodes exactly instead of by the low-rank map.
 */
public final class ReencodeSettings implements Serializable {
  private static final long serialVersionUID = 1L;

  @Setting(value = "steps between approximate re-encodings (the paper's w)", min = 1)
  public int reencodeEvery = 100;

  /**
   * Approximate re-encoding is the paper's economy for a tower that moves a little per cycle
   * (fine-tuning). Trained from scratch, the tower moves far between early cycles and a d' x d' map
   * loses much of it: the cache then drifts further from the model with every cycle, since nothing
   * re-encodes it. The first cycle, which draws the landmarks, is always exact.
   */
  @Setting(
      value =
          "re-encode every target exactly at a cycle whose map's held-out cosine to exact"
              + " re-encoding is below this (0: never; the cycle that draws the landmarks always is)",
      min = 0,
      max = 1)
  public double reencodeExactBelow = 0;

  /**
   * An exact cycle off the shards' critical path: each shard key applies the cycle's map at once,
   * answers the next batches at the new version, and from the second of them re-encodes this many
   * targets exactly after each batch until all are (ExactRefinement), the tree serving the map's
   * approximation meanwhile and built once from the exact vectors at the end. Re-encoding at once
   * stalls the key for the whole pass (the trainer waits, every checkpoint is held), which is
   * seconds for the bag tower and minutes for a transformer; the default, -1, sizes the groups by
   * the tower's encoding cost ({@link TrainingJobConfig#reencodeExactPerBatch()}).
   */
  @Setting(
      value =
          "exact re-encode cycles: targets each shard key re-encodes per batch after applying the"
              + " cycle's map at once (0: all at once, before the next batch; -1: 512 for the"
              + " transformer tower, 16384 for the others)",
      min = -1)
  public int reencodeExactPerBatch = -1;

  @Setting(value = "regression sample size s' (reservoir of uniform negatives)", min = 4)
  public int regressionSamples = 2048;
}
