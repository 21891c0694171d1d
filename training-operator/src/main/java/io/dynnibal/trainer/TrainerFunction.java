package io.dynnibal.trainer;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.negatives.Sampler;
import io.dynnibal.schemas.AvroTrust;
import io.dynnibal.schemas.ModelUpdate;
import io.dynnibal.schemas.TrainerProgress;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.snapshot.ParameterSnapshots;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.DeadLetters;
import io.dynnibal.stream.JobMetrics;
import io.dynnibal.stream.MergedBatch;
import io.dynnibal.stream.QueryBatch;
import io.dynnibal.training.DualEncoderTrainer;
import io.dynnibal.training.SkippedStep;
import io.dynnibal.training.StepResult;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;
import java.util.UUID;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.formats.avro.typeutils.AvroTypeInfo;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The trainer (parallelism 1): one DJL step per merged batch with its sampled, uniform and in-batch
 * negatives; every w steps a {@link ReencodeCycle} and a {@link ModelUpdate} for the shards; a
 * {@link TrainingMetrics} record per step. It orchestrates; the parts live in their own classes:
 * {@link StepInputs} (a batch as a step sees it), {@link TrainerNegativeCache}, {@link
 * RegressionReservoir}, {@link FeedbackTracker}, {@link WatchedTargets}, {@link StepMetrics} and
 * {@link ModelVersionStore}.
 *
 * <p>Exactly once: at every checkpoint the counters, the reservoir and the landmarks go into
 * operator state, and {@link TrainerOperator} streams the parameters and Adam's moments into the
 * checkpoint's raw operator state.
 *
 * <p>Model updates leave at once, without waiting for a checkpoint (the model-updates sink is not
 * transactional), so a restore can leave updates of the lost branch - emitted after the restored
 * checkpoint - on the topic, where the shards will read them again. A version number therefore
 * never names two models: after a restore, the next version skips every number the lost branch
 * wrote to the snapshot directory, and that update is emitted at the first step. Its map moves the
 * restored version's cache ({@code map_from}), so a shard that applied anything of the lost branch
 * re-encodes exactly, and shards apply only versions above the one they hold: whatever of the lost
 * branch they took is replaced. A version is deleted once a completed checkpoint shows that every
 * shard holds a newer one.
 */
public final class TrainerFunction extends ProcessFunction<MergedBatch, TrainingMetrics>
    implements CheckpointedFunction, CheckpointListener {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(TrainerFunction.class);
  static final String STAGE = "trainer";
  public static final OutputTag<ModelUpdate> MODEL_UPDATES =
      new OutputTag<>("model-updates", new AvroTypeInfo<>(ModelUpdate.class));

  /**
   * One record per batch taken (trained, skipped or refused), after its model update if it emitted
   * one: the job lets query batches through to the shards at this pace.
   */
  public static final OutputTag<TrainerProgress> PROGRESS =
      new OutputTag<>("progress", new AvroTypeInfo<>(TrainerProgress.class));

  private final TrainerSettings settings;
  private final FaultInjection faults;

  /** {@code map_from} of an update whose map no shard may apply: no shard holds version -1. */
  static final long NO_MAP = -1;

  /** Whether this run said that max.steps is reached (once). */
  private transient boolean saidMaxSteps;

  private transient DualEncoderTrainer trainer;
  private transient ListState<TrainerCheckpoint> state;
  private transient String runId;
  private transient long version;

  /**
   * After a restore: the lowest number the next version may take (above every version a lost branch
   * may have emitted), and the next step emits it at once. 0 when no restore left such versions.
   */
  private transient long restartVersion;

  private transient RegressionReservoir reservoir;

  /**
   * The Nyström landmarks (the same targets at every version; null until the first cycle draws
   * them) with their cache vectors at the current version.
   */
  private transient List<TargetFeatures> landmarks;

  private transient TrainerNegativeCache negativeCache;
  private transient FeedbackTracker feedback;
  private transient WatchedTargets watched;
  private transient StepMetrics metrics;
  private transient ModelVersionStore versions;

  /**
   * The trainer restored from the checkpoint's raw state by {@link TrainerOperator}, before {@link
   * #initializeState}; null on a fresh start.
   */
  private transient DualEncoderTrainer restoredTrainer;

  /** Only {@link TrainerOperator} runs it: it carries the parameters through checkpoints. */
  TrainerFunction(TrainerSettings settings, FaultInjection faults) {
    this.settings = settings;
    this.faults = faults;
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    AvroTrust.install();
    state =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>("trainer", TypeInformation.of(TrainerCheckpoint.class)));
    reservoir = new RegressionReservoir(settings.regressionSamples());
    negativeCache =
        settings.sampler() == Sampler.NEGATIVE_CACHE ? new TrainerNegativeCache(settings) : null;
    feedback = new FeedbackTracker(System::currentTimeMillis);
    watched = new WatchedTargets(settings.watchTargets());
    TrainerCheckpoint saved = null;
    for (TrainerCheckpoint c : state.get()) {
      saved = c;
    }
    runId = saved == null ? UUID.randomUUID().toString().substring(0, 8) : saved.runId;
    metrics = new StepMetrics(runId, settings.sampler().id, settings.model().outputDim());
    if (saved == null) {
      versions = new ModelVersionStore(settings.snapshotDir(), runId, settings.seed());
      trainer =
          new DualEncoderTrainer(
              DualEncoder.create(settings.model(), settings.seed()), settings.trainerConfig());
      return;
    }
    versions = new ModelVersionStore(settings.snapshotDir(), runId, settings.seed());
    // Checkpoints from before the raw stream carried the parameters as byte arrays.
    trainer =
        saved.fileContents != null
            ? ParameterSnapshots.readTrainer(saved.files(), settings.trainerConfig())
            : restoredTrainer;
    restoredTrainer = null;
    if (trainer == null) {
      throw new IllegalStateException(
          "checkpoint "
              + saved.checkpointId
              + " holds the trainer's counters but not its parameters (raw operator state)");
    }
    version = saved.version;
    metrics.restore(saved);
    feedback.restore(saved);
    watched.restore(saved);
    reservoir.restore(saved.reservoir == null ? new TargetFeatures[0] : saved.reservoir);
    // Checkpoints from before fixed landmarks have none, and a job restored with another d' cannot
    // use them: the next cycle draws them.
    landmarks =
        saved.landmarks == null || saved.landmarks.length != settings.landmarks()
            ? null
            : List.of(saved.landmarks);
    if (negativeCache != null && saved.negativeCache != null) {
      negativeCache.restore(saved.negativeCache);
    }
    // Versions written after this checkpoint belong to a lost branch: their numbers are skipped
    // (see the class comment). Their directories stay, so that a second restore from the same
    // checkpoint still sees them, and a shard that loaded one can still encode with it; they go
    // like any old version once every shard holds a newer one.
    long newest = versions.newestVersion();
    restartVersion = Math.max(saved.restartVersion, newest > version ? newest + 1 : 0);
    LOG.info(
        "trainer restored at step {} (model version {}) from checkpoint {}",
        trainer.step(),
        version,
        saved.checkpointId);
  }

  @Override
  public void open(OpenContext context) {
    var group = getRuntimeContext().getMetricGroup().addGroup(JobMetrics.GROUP);
    group.gauge(JobMetrics.STEP, () -> trainer == null ? 0 : trainer.step());
    group.gauge(JobMetrics.LOSS, () -> metrics.lastLoss());
    group.gauge(JobMetrics.STEPS_PER_SECOND, () -> metrics.stepsPerSecond());
    group.gauge(JobMetrics.CACHE_STALENESS_STEPS, () -> metrics.lastStaleness());
    group.gauge(JobMetrics.MH_ACCEPTANCE_RATE, () -> metrics.lastAcceptance());
    group.gauge(JobMetrics.MODEL_VERSION, () -> version);
    group.gauge(JobMetrics.REENCODE_CYCLES, () -> feedback.versionEverywhere());
    group.gauge(JobMetrics.FEEDBACK_LATENCY_STEPS, () -> orNaN(feedback.latencySteps()));
    group.gauge(JobMetrics.FEEDBACK_LATENCY_MS, () -> orNaN(feedback.latencyMs()));
    group.gauge(JobMetrics.PAIRS_TRAINED, () -> metrics.pairsTrained());
    group.gauge(JobMetrics.PAIRS_DEAD_LETTERED, () -> metrics.pairsDeadLettered());
    group.gauge(JobMetrics.GRADIENT_NORM, () -> metrics.lastGradientNorm());
    group.gauge(JobMetrics.STEPS_REFUSED, () -> metrics.stepsRefused());
    group.gauge(JobMetrics.LOSS_SPIKES, () -> metrics.lossSpikes());
  }

  private static double orNaN(Number n) {
    return n == null ? Double.NaN : n.doubleValue();
  }

  @Override
  public void processElement(MergedBatch merged, Context ctx, Collector<TrainingMetrics> out)
      throws Exception {
    take(merged, ctx, out);
    ctx.output(
        PROGRESS,
        new TrainerProgress(
            merged.batch.batchId, (long) trainer.step(), System.currentTimeMillis()));
  }

  private void take(MergedBatch merged, Context ctx, Collector<TrainingMetrics> out)
      throws Exception {
    long arrived = System.nanoTime();
    if (settings.maxSteps() > 0 && trainer.step() >= settings.maxSteps()) {
      if (!saidMaxSteps) {
        saidMaxSteps = true;
        // Said once: a job restored at its max.steps with the same setting trains no further, and
        // nothing else would say why.
        LOG.info(
            "step {}: max.steps {} reached: further batches are skipped (counted as skipped; raise"
                + " max.steps to train on)",
            trainer.step(),
            settings.maxSteps());
      }
      metrics.skipped();
      return;
    }
    QueryBatch batch = merged.batch;
    // The paper trains on uniform negatives before it switches to hard ones: hard negatives of an
    // untrained model are noise, and the index has nothing faithful to offer yet.
    boolean hard = trainer.step() >= settings.uniformWarmupSteps();
    StepInputs inputs = new StepInputs(merged, trainer.encoder(), hard);
    for (int q : inputs.unknownPositives) {
      metrics.deadLettered();
      ctx.output(
          DeadLetters.TAG,
          DeadLetters.ofDecoded(
              settings.pairsTopic(),
              batch.pairIds[q],
              "pair "
                  + batch.pairIds[q]
                  + ": target_id \""
                  + batch.targetIds[q]
                  + "\" is not in the index (unknown, deleted, or not indexed yet)",
              STAGE));
    }
    if (inputs.isEmpty()) {
      metrics.skipped();
      return;
    }
    for (TargetFeatures t : merged.uniform) {
      reservoir.add(t);
    }
    if (hard && merged.candidates.length > 0) {
      // Re-scored picks count as chosen for certain: their two-stage draw probability is not
      // tracked, so the correction leaves their weight as drawn.
      for (TargetFeatures t :
          CandidateRescoring.draw(
              trainer.encoder(),
              merged,
              settings.negativesPerExample(),
              settings.negativesMode(),
              settings.negativesSharpness(),
              settings.seed())) {
        inputs.addHardNegative(t, 1);
      }
    }
    if (hard && negativeCache != null) {
      TrainerNegativeCache.Drawn drawn =
          negativeCache.draw(trainer.encoder(), inputs.queries, inputs.positiveIds, batch.batchId);
      for (TargetFeatures t : drawn.negatives()) {
        inputs.addHardNegative(t, drawn.inclusions().of(t.id));
      }
    }
    watched.count(inputs.negativeIds);
    metrics.aboutToStep();
    faults.beforeStep(trainer.step() + 1);
    StepResult result;
    try {
      result = trainer.step(inputs.batch(settings.negativesCorrection()));
    } catch (SkippedStep e) {
      // A non-finite loss or gradient leaves the parameters untouched; the batch is reported and
      // skipped.
      metrics.stepRefused();
      ctx.output(
          DeadLetters.TAG,
          DeadLetters.ofDecoded(
              settings.pairsTopic(),
              "batch-" + batch.batchId,
              "batch " + batch.batchId + " skipped: " + e.getMessage(),
              STAGE));
      return;
    }
    if (negativeCache != null) {
      negativeCache.addPositives(trainer.encoder(), inputs.positiveTargets);
    }
    // A shard can answer with a version of a lost branch (numbered above this trainer's) until the
    // update after a restore reaches it: it holds "this version or newer" only in number.
    if (feedback.observed(Math.min(merged.minModelVersion, version), result.step())) {
      LOG.info(
          "step {}: model update {} reached every shard: batch {} is the first sampled with it, {}"
              + " steps and {} ms after it was emitted",
          result.step(),
          feedback.versionEverywhere(),
          batch.batchId,
          feedback.latencySteps(),
          Math.round(feedback.latencyMs()));
    }
    // In-batch negatives need nothing from the shards but positives: no model updates (and no
    // uniform draws to fit a map with).
    if (settings.sampler() != Sampler.IN_BATCH
        && (restartVersion > 0
            || result.step() - feedback.stepOf(version) >= settings.reencodeEvery())) {
      publishUpdate(ctx, result.step(), batch.batchId);
    }
    if (settings.keepModelEvery() > 0 && result.step() % settings.keepModelEvery() == 0) {
      versions.keep(trainer.encoder(), result.step());
    }
    if (result.step() == settings.maxSteps()) {
      versions.writeFinal(trainer.encoder(), result.step());
    }
    out.collect(
        metrics.stepped(
            result,
            merged,
            inputs.trainedPairs,
            inputs.negativeIds.size(),
            arrived,
            version,
            feedback,
            watched.counts(),
            negativeMiningBytes(merged)));
  }

  /**
   * A re-encode cycle and its model update, when the reservoir holds enough targets cached at the
   * current version; otherwise the next step tries again.
   */
  private void publishUpdate(Context ctx, long step, long batchId) {
    long started = System.nanoTime();
    long newVersion = Math.max(version + 1, restartVersion);
    ReencodeCycle.Outcome cycle;
    boolean exactRestart = false;
    try {
      cycle = cycle(reservoir.atVersion(version), newVersion, step);
      if (cycle == null && newVersion > version + 1) {
        // After a restore, shards that applied a lost version answer with its caches, so samples
        // at the restored version may never come. This update then re-encodes exactly, and
        // samples of any version do for its landmarks (their caches only fit the unused map).
        cycle = cycle(reservoir.all(), newVersion, step);
        exactRestart = cycle != null;
      }
    } catch (IllegalStateException e) {
      LOG.warn("step {}: re-encode cycle skipped: {}", step, e.getMessage());
      return;
    }
    if (cycle == null) {
      return;
    }
    // The map moves the cache of the version before this one in the trainer's own history, which
    // after a restore is not the number before it (see the class comment).
    ModelUpdate update =
        ModelUpdate.newBuilder(cycle.update())
            // An exact restart's map was fit on caches of several versions: no shard may apply it
            // (no shard holds version -1), every one re-encodes at once.
            .setMapFrom(exactRestart ? NO_MAP : version)
            .setReencodeExactly(cycle.update().getReencodeExactly() || exactRestart)
            .build();
    if (!exactRestart) {
      metrics.reencoded(cycle.meanCosine(), cycle.minCosine());
    }
    if (update.getVersion() > version + 1) {
      LOG.info(
          "step {}: versions {} to {} were emitted by the branch the restore discarded: model"
              + " update {} replaces them (a shard that took one of them re-encodes exactly)",
          step,
          version + 1,
          update.getVersion() - 1,
          update.getVersion());
    }
    if (exactRestart) {
      LOG.info(
          "step {}: no samples cached at the restored version {}: the shards re-encode every"
              + " target exactly",
          step,
          version);
    } else if (update.getReencodeExactly()) {
      LOG.info(
          "step {}: the landmarks are new (the cache is in another basis): the shards re-encode"
              + " every target exactly",
          step);
    } else if (cycle.meanCosine() < settings.reencodeExactBelow()) { // false for NaN
      update = ModelUpdate.newBuilder(update).setReencodeExactly(true).build();
      LOG.info(
          "step {}: the map's held-out cosine {} is below reencode.exact.below {}: the shards"
              + " re-encode every target exactly",
          step,
          String.format("%.4f", cycle.meanCosine()),
          settings.reencodeExactBelow());
    }
    landmarks = update.getReencodeExactly() ? cycle.landmarksExact() : cycle.landmarksMoved();
    version = update.getVersion();
    restartVersion = 0;
    feedback.emitted(version, step);
    ctx.output(MODEL_UPDATES, update);
    faults.afterModelUpdate(version);
    LOG.info(
        "step {}: model update {} emitted after batch {}, {} ms after the step ({}); map vs exact"
            + " re-encoding on held-out samples: cosine mean {}, min {}",
        step,
        version,
        batchId,
        (System.nanoTime() - started) / 1_000_000,
        update.getSnapshotUri(),
        String.format("%.4f", cycle.meanCosine()),
        String.format("%.4f", cycle.minCosine()));
  }

  private ReencodeCycle.Outcome cycle(List<TargetFeatures> fresh, long newVersion, long step) {
    return ReencodeCycle.build(
        trainer.encoder(),
        fresh,
        landmarks,
        settings.landmarks(),
        newVersion,
        step,
        versions.base(),
        settings.seed());
  }

  /**
   * Bytes a deployment of the sampler holds on the trainer's accelerator for mining (the paper's
   * Mem % numerator): the shards' full-dimension pools, the negative cache, or for DyNNIBAL the
   * landmarks, the regression data and the map (its Nyström index is CPU memory in the shards).
   */
  private long negativeMiningBytes(MergedBatch merged) {
    int d = settings.model().outputDim();
    long floats =
        switch (settings.sampler().mining) {
          case SHARD_POOL -> merged.miningFloats;
          case TRAINER_CACHE -> negativeCache.floats();
          case SHARD_TREE ->
              (long) (settings.landmarks() + settings.regressionSamples()) * d
                  + (long) settings.landmarks() * settings.landmarks();
          case NONE -> 0;
        };
    return floats * Float.BYTES;
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    TrainerCheckpoint c = new TrainerCheckpoint();
    c.runId = runId;
    c.checkpointId = context.getCheckpointId();
    c.version = version;
    c.restartVersion = restartVersion;
    feedback.checkpointTaken(context.getCheckpointId());
    feedback.save(c);
    metrics.save(c);
    watched.save(c);
    c.reservoir = reservoir.toArray();
    c.landmarks = landmarks == null ? null : landmarks.toArray(new TargetFeatures[0]);
    c.negativeCache = negativeCache == null ? null : negativeCache.save();
    state.update(List.of(c));
  }

  /**
   * Reads the parameters {@link #writeParameters} wrote; called before {@link #initializeState}.
   */
  void restoreParameters(InputStream in) {
    if (restoredTrainer != null) {
      throw new IllegalStateException(
          "the checkpoint holds two sets of trainer parameters; the trainer runs at parallelism 1");
    }
    restoredTrainer = ParameterSnapshots.readTrainer(in, settings.trainerConfig());
  }

  /** Streams the parameters and Adam's moments into a checkpoint (after {@link #snapshotState}). */
  void writeParameters(OutputStream out) throws IOException {
    ParameterSnapshots.writeTrainer(trainer, trainer.step(), settings.seed(), out);
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) {
    long oldestNeeded = feedback.checkpointCompleted(checkpointId);
    if (oldestNeeded > 0) {
      versions.deleteBelow(oldestNeeded);
    }
  }

  @Override
  public void close() {
    if (trainer != null) {
      trainer.encoder().close();
      trainer = null;
    }
    if (restoredTrainer != null) {
      restoredTrainer.encoder().close();
      restoredTrainer = null;
    }
  }
}
