package io.dynnibal.trainer;

import io.dynnibal.state.TargetFeatures;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The trainer's managed operator state: counters, the regression reservoir, the landmarks, the
 * negative cache and the feedback bookkeeping. The parameters and Adam's moments travel beside it
 * as raw operator state ({@link TrainerOperator}).
 */
public class TrainerCheckpoint {
  /**
   * Names the directory of this run's model versions under the snapshot dir; kept across restores.
   */
  public String runId;

  /** The trainer's fencing epoch when the checkpoint was taken ({@link TrainerFunction}). */
  public long generation;

  /**
   * The parameter snapshot's files, as checkpoints from before {@link TrainerOperator} carried
   * them; null in newer ones. Read on restore, never written.
   */
  public String[] fileNames;

  public byte[][] fileContents;
  public long checkpointId;
  public long version;

  /**
   * The number the next model update must take when a restore left versions of a lost branch on the
   * model-updates topic (0: none); kept so that a second restore before that update is emitted
   * still skips them.
   */
  public long restartVersion;

  public long pairsTrained;
  public long pairsDeadLettered;
  public long batchesSkipped;

  /** Pairs of batches that arrived after {@code max.steps} (0 in checkpoints from before it). */
  public long pairsAfterMaxSteps;

  public long stepsClipped;
  public long stepsRefused;

  /** {@link io.dynnibal.training.LossWatch#save}; null in checkpoints from before it. */
  public double[] lossWatch;

  public long lastVersionEverywhere;
  public long feedbackSteps = -1;
  public double feedbackMs = -1;
  public TargetFeatures[] reservoir;

  /**
   * The Nyström landmark targets with their cache vectors at {@link #version}; null before the
   * first re-encode cycle (and in checkpoints from before landmarks were kept).
   */
  public TargetFeatures[] landmarks;

  /**
   * The negative cache, oldest first, each entry's embedding in {@code cache} (negative-cache
   * sampler only).
   */
  public TargetFeatures[] negativeCache;

  public long[] emittedVersions;
  public long[] emittedSteps;
  public long[] emittedMs;
  public String[] watchedIds;
  public long[] watchedCounts;

  public TrainerCheckpoint() {}

  /** The parameter snapshot's files by name, in their order. */
  Map<String, byte[]> files() {
    Map<String, byte[]> files = new LinkedHashMap<>();
    for (int i = 0; i < fileNames.length; i++) {
      files.put(fileNames[i], fileContents[i]);
    }
    return files;
  }
}
