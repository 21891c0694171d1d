package io.dynnibal.trainer;

import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.stream.MergedBatch;
import io.dynnibal.training.StepResult;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The trainer's running figures (pairs trained and dead-lettered, batches skipped, throughput, the
 * last step's loss, staleness and MH acceptance) and the {@link TrainingMetrics} record of each
 * step. Pairs and batches counts survive restores; throughput counts this run only.
 */
final class StepMetrics {
  private final String runId;
  private final String sampler;
  private final int outputDim;
  private volatile long pairsTrained;
  private volatile long pairsDeadLettered;
  private volatile double stepsPerSecond;
  private long batchesSkipped;
  private long startNanos = -1;
  private int stepsThisRun;
  private volatile double lastLoss;
  private volatile long lastStaleness;
  private volatile double lastAcceptance = Double.NaN;

  StepMetrics(String runId, String sampler, int outputDim) {
    this.runId = runId;
    this.sampler = sampler;
    this.outputDim = outputDim;
  }

  void deadLettered() {
    pairsDeadLettered++;
  }

  void skipped() {
    batchesSkipped++;
  }

  /** Called before the first step of this run: indexing before it is not training time. */
  void aboutToStep() {
    if (startNanos < 0) {
      startNanos = System.nanoTime();
    }
  }

  /** Figures what a step trained, and returns its record. */
  TrainingMetrics stepped(
      StepResult result,
      MergedBatch merged,
      List<String> trainedPairs,
      long modelVersion,
      FeedbackTracker feedback,
      Map<String, Long> watched,
      long negativeMiningBytes) {
    stepsThisRun++;
    pairsTrained += trainedPairs.size();
    lastLoss = result.loss();
    lastStaleness = result.step() - merged.minModelStep;
    lastAcceptance =
        merged.proposals == 0 ? Double.NaN : merged.accepted / (double) merged.proposals;
    Map<String, Double> latency = new LinkedHashMap<>();
    for (int s = 0; s < merged.shardMillis.length; s++) {
      latency.put(Integer.toString(s), merged.shardMillis[s]);
    }
    double seconds = (System.nanoTime() - startNanos) / 1e9;
    stepsPerSecond = seconds > 0 ? stepsThisRun / seconds : 0;
    return TrainingMetrics.newBuilder()
        .setStep(result.step())
        .setModelVersion(modelVersion)
        .setTimeMs(System.currentTimeMillis())
        .setSampler(sampler)
        .setLoss(result.loss())
        .setLearningRate(result.learningRate())
        .setStepsPerSecond(stepsPerSecond)
        .setCacheStalenessSteps(lastStaleness)
        .setMhAcceptanceRate(Double.isNaN(lastAcceptance) ? null : lastAcceptance)
        .setShardSamplingLatencyMs(latency)
        .setEvalRecall(new HashMap<>())
        .setEvalMrr(new HashMap<>())
        .setPairsTrained(pairsTrained)
        .setPairsDeadLettered(pairsDeadLettered)
        .setIndexTargets(merged.indexTargets)
        .setReencodeCycles(feedback.versionEverywhere())
        .setFeedbackLatencySteps(feedback.latencySteps())
        .setFeedbackLatencyMs(feedback.latencyMs())
        .setWatchedNegatives(watched)
        .setPairIds(trainedPairs)
        .setModelUpdatesIgnored(merged.updatesIgnored)
        .setNegativeMiningBytes(negativeMiningBytes)
        .setFullDimensionBytes(merged.indexTargets * outputDim * Float.BYTES)
        .setRunId(runId)
        .build();
  }

  double stepsPerSecond() {
    return stepsPerSecond;
  }

  long pairsTrained() {
    return pairsTrained;
  }

  long pairsDeadLettered() {
    return pairsDeadLettered;
  }

  double lastLoss() {
    return lastLoss;
  }

  long lastStaleness() {
    return lastStaleness;
  }

  double lastAcceptance() {
    return lastAcceptance;
  }

  void save(TrainerCheckpoint c) {
    c.pairsTrained = pairsTrained;
    c.pairsDeadLettered = pairsDeadLettered;
    c.batchesSkipped = batchesSkipped;
  }

  void restore(TrainerCheckpoint c) {
    pairsTrained = c.pairsTrained;
    pairsDeadLettered = c.pairsDeadLettered;
    batchesSkipped = c.batchesSkipped;
  }
}
