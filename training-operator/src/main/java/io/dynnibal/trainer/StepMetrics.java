package io.dynnibal.trainer;

import io.dynnibal.negatives.SoftmaxFidelity;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.stream.JobMetrics;
import io.dynnibal.stream.MergedBatch;
import io.dynnibal.training.LossWatch;
import io.dynnibal.training.StepResult;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The trainer's running figures (pairs trained and dead-lettered, batches skipped, throughput, the
 * last step's loss, staleness and MH acceptance, the optimiser's health: gradient norm, clipped and
 * refused steps, loss spikes and divergence) and the {@link TrainingMetrics} record of each step.
 * Counts and the loss watch survive restores; throughput counts this run only. Loss spikes and
 * divergence are also logged as warnings (the first few spikes, then every hundredth).
 */
final class StepMetrics {
  private static final Logger LOG = LoggerFactory.getLogger(StepMetrics.class);

  private final String runId;
  private final String sampler;
  private final int outputDim;
  private volatile long pairsTrained;
  private volatile long pairsDeadLettered;
  private volatile double stepsPerSecond;
  private long batchesSkipped;
  private volatile long pairsAfterMaxSteps;

  /** Whether this start of the trainer said that max.steps is reached. */
  private boolean saidMaxSteps;

  private long startNanos = -1;
  private long busyNanos;
  private int stepsThisRun;
  private volatile double lastLoss;
  private volatile long lastStaleness;
  private volatile double lastAcceptance = Double.NaN;
  private volatile double lastGradientNorm = Double.NaN;
  private long stepsClipped;
  private volatile long stepsRefused;

  /** Model snapshots this start of the trainer could not write (a full or failing disk). */
  private volatile long snapshotWriteFailures;

  private final LossWatch lossWatch = new LossWatch();
  private double reencodeMeanCosine = Double.NaN;
  private double reencodeMinCosine = Double.NaN;
  private final SoftmaxFidelity.Mean fidelityRun = new SoftmaxFidelity.Mean();

  /** The clock of the throughput and busy figures, {@link System#nanoTime()} but in tests. */
  private final LongSupplier nanoClock;

  StepMetrics(String runId, String sampler, int outputDim) {
    this(runId, sampler, outputDim, System::nanoTime);
  }

  StepMetrics(String runId, String sampler, int outputDim, LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
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

  /**
   * A batch that arrived after {@code max.steps}: skipped, its pairs neither trained nor
   * dead-lettered but counted here, so the audit still adds up.
   */
  void skippedAfterMaxSteps(int pairs, long step, long maxSteps) {
    if (!saidMaxSteps) {
      saidMaxSteps = true;
      // Said once per start: a job restored at its max.steps with the same setting trains no
      // further, and nothing else would say why.
      LOG.info(
          "step {}: max.steps {} reached: further batches are skipped, their pairs counted in"
              + " the metric {} (raise max.steps to train on)",
          step,
          maxSteps,
          JobMetrics.PAIRS_AFTER_MAX_STEPS);
    }
    batchesSkipped++;
    pairsAfterMaxSteps += pairs;
  }

  /** The held-out fidelity of the latest re-encode cycle's map (see {@link ReencodeCycle}). */
  void reencoded(double meanCosine, double minCosine) {
    reencodeMeanCosine = meanCosine;
    reencodeMinCosine = minCosine;
  }

  /** A batch the trainer refused (non-finite loss or gradient): skipped, and counted apart. */
  void stepRefused() {
    batchesSkipped++;
    stepsRefused++;
  }

  /** Called before the first step of this run: indexing before it is not training time. */
  void aboutToStep() {
    if (startNanos < 0) {
      startNanos = nanoClock.getAsLong();
    }
  }

  /**
   * Figures what a step trained, and returns its record.
   *
   * @param arrivedNanos when the trainer began on this batch (on the metrics' clock, {@link
   *     System#nanoTime()}): from then until now it was busy, not waiting for input
   * @param negatives the negatives the step trained against
   */
  TrainingMetrics stepped(
      StepResult result,
      MergedBatch merged,
      List<String> trainedPairs,
      int negatives,
      long arrivedNanos,
      long modelVersion,
      FeedbackTracker feedback,
      Map<String, Long> watched,
      long negativeMiningBytes) {
    stepsThisRun++;
    long now = nanoClock.getAsLong();
    busyNanos += now - Math.max(arrivedNanos, startNanos);
    pairsTrained += trainedPairs.size();
    lastLoss = result.loss();
    lastGradientNorm = result.gradientNorm();
    if (result.clipped()) {
      stepsClipped++;
    }
    watchLoss(result);
    lastStaleness = result.step() - merged.minModelStep;
    lastAcceptance =
        merged.proposals == 0 ? Double.NaN : merged.accepted / (double) merged.proposals;
    Map<String, Double> latency = new LinkedHashMap<>();
    for (int s = 0; s < merged.shardMillis.length; s++) {
      latency.put(Integer.toString(s), merged.shardMillis[s]);
    }
    double seconds = (now - startNanos) / 1e9;
    stepsPerSecond = seconds > 0 ? stepsThisRun / seconds : 0;
    double idle = seconds > 0 ? Math.max(0, 1 - busyNanos / 1e9 / seconds) : 0;
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
        .setFullDimensionBytes(merged.storedTargets * outputDim * Float.BYTES)
        .setRunId(runId)
        .setGradientNorm((double) result.gradientNorm())
        .setStepsClipped(stepsClipped)
        .setStepsRefused(stepsRefused)
        .setLossSpikes(lossWatch.spikes())
        .setDiverged(lossWatch.diverged())
        .setReencodeMeanCosine(Double.isNaN(reencodeMeanCosine) ? null : reencodeMeanCosine)
        .setReencodeMinCosine(Double.isNaN(reencodeMinCosine) ? null : reencodeMinCosine)
        .setFidelity(fidelity(merged))
        .setFidelityRunMean(fidelityRunMean())
        .setNegativesPerStep((long) negatives)
        .setMergeMs(Double.isNaN(merged.mergeMillis) ? null : merged.mergeMillis)
        .setTrainerBusyMs(busyNanos / 1e6)
        .setTrainerIdleFraction(idle)
        .build();
  }

  /** This step's fidelity figures (those measured), added to the run's means. */
  private Map<String, Double> fidelity(MergedBatch merged) {
    SoftmaxFidelity.Figures f =
        new SoftmaxFidelity.Figures(
            merged.fidelityOverlapTopk,
            merged.fidelityLogitRatio,
            merged.fidelityMassRatio,
            merged.fidelityNormaliserError);
    fidelityRun.add(f);
    return f.asMap();
  }

  private Map<String, Double> fidelityRunMean() {
    return fidelityRun.mean().asMap();
  }

  private void watchLoss(StepResult result) {
    boolean wasDiverged = lossWatch.diverged();
    double trend = lossWatch.trend();
    if (lossWatch.observe(result.loss())) {
      long spikes = lossWatch.spikes();
      if (spikes <= 5 || spikes % 100 == 0) {
        LOG.warn(
            "step {}: loss spike {} (loss {}, smoothed {}, gradient norm {}{}); {} spikes so far",
            result.step(),
            spikes,
            String.format("%.3f", result.loss()),
            String.format("%.3f", trend),
            String.format("%.2f", result.gradientNorm()),
            result.clipped() ? ", clipped" : "",
            spikes);
      }
    }
    if (lossWatch.diverged() && !wasDiverged) {
      LOG.warn(
          "step {}: training diverged: the smoothed loss {} is more than twice its lowest",
          result.step(),
          String.format("%.3f", lossWatch.trend()));
    }
  }

  double lastGradientNorm() {
    return lastGradientNorm;
  }

  long stepsRefused() {
    return stepsRefused;
  }

  /** Registers this start's figures as the trainer's gauges ({@link JobMetrics}). */
  void registerGauges(org.apache.flink.metrics.MetricGroup group) {
    group.gauge(JobMetrics.LOSS, this::lastLoss);
    group.gauge(JobMetrics.STEPS_PER_SECOND, this::stepsPerSecond);
    group.gauge(JobMetrics.CACHE_STALENESS_STEPS, this::lastStaleness);
    group.gauge(JobMetrics.MH_ACCEPTANCE_RATE, this::lastAcceptance);
    group.gauge(JobMetrics.SNAPSHOT_WRITE_FAILURES, this::snapshotWriteFailures);
    group.gauge(JobMetrics.PAIRS_TRAINED, this::pairsTrained);
    group.gauge(JobMetrics.PAIRS_DEAD_LETTERED, this::pairsDeadLettered);
    group.gauge(JobMetrics.PAIRS_AFTER_MAX_STEPS, this::pairsAfterMaxSteps);
    group.gauge(JobMetrics.GRADIENT_NORM, this::lastGradientNorm);
    group.gauge(JobMetrics.STEPS_REFUSED, this::stepsRefused);
    group.gauge(JobMetrics.LOSS_SPIKES, this::lossSpikes);
  }

  /** Counts a model snapshot that could not be written. */
  void snapshotWriteFailed() {
    snapshotWriteFailures++;
  }

  long snapshotWriteFailures() {
    return snapshotWriteFailures;
  }

  long lossSpikes() {
    return lossWatch.spikes();
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

  long pairsAfterMaxSteps() {
    return pairsAfterMaxSteps;
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
    c.pairsAfterMaxSteps = pairsAfterMaxSteps;
    c.stepsClipped = stepsClipped;
    c.stepsRefused = stepsRefused;
    c.lossWatch = lossWatch.save();
  }

  void restore(TrainerCheckpoint c) {
    pairsTrained = c.pairsTrained;
    pairsDeadLettered = c.pairsDeadLettered;
    batchesSkipped = c.batchesSkipped;
    pairsAfterMaxSteps = c.pairsAfterMaxSteps;
    stepsClipped = c.stepsClipped;
    stepsRefused = c.stepsRefused;
    lossWatch.restore(c.lossWatch);
  }
}
