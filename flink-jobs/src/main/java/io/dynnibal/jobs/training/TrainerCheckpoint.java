package io.dynnibal.jobs.training;

/** The trainer's operator state: where its parameters were written at the checkpoint, and its counters. */
public class TrainerCheckpoint {
  public String snapshotUri;
  public long checkpointId;
  public long version;
  public long pairsTrained;
  public long pairsDeadLettered;
  public long batchesSkipped;
  public long lastVersionEverywhere;
  public long feedbackSteps = -1;
  public double feedbackMs = -1;
  public TargetFeatures[] reservoir;
  public long[] emittedVersions;
  public long[] emittedSteps;
  public long[] emittedMs;
  public String[] watchedIds;
  public long[] watchedCounts;

  public TrainerCheckpoint() {}
}
