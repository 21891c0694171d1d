package io.dynnibal.trainer;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.TorchRuntime;
import io.dynnibal.sampler.MiningFloats;
import io.dynnibal.sampler.TrainerNegatives;
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
 * negatives; every w steps a {@link ModelUpdate} for the shards ({@link ModelUpdates}); a {@link
 * TrainingMetrics} record per step. It orchestrates; the parts live in their own classes: {@link
 * StepInputs} (a batch as a step sees it), the sampler's {@link TrainerNegatives}, {@link
 * ModelUpdates}, {@link RegressionReservoir}, {@link FeedbackTracker}, {@link WatchedTargets},
 * {@link StepMetrics} and {@link ModelVersionStore}.
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

  private transient DualEncoderTrainer trainer;
  private transient ListState<TrainerCheckpoint> state;
  private transient String runId;

  /** The fencing epoch of this start of the trainer ({@link ModelUpdates.Provenance#next}). */
  private transient long generation;

  private transient RegressionReservoir reservoir;

  private transient TrainerNegatives trainerNegatives;

  /** What DyNNIBAL's re-encoding holds at full dimension: fixed by the settings. */
  private transient long reencodingFloats;

  private transient FeedbackTracker feedback;
  private transient WatchedTargets watched;
  private transient StepMetrics metrics;
  private transient PairDeadLetters pairLetters;
  private transient ModelVersionStore versions;
  private transient ModelUpdates updates;

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
    trainerNegatives = settings.sampler().trainerNegatives(settings.trainerNegativesContext());
    reencodingFloats =
        MiningFloats.reencodingMap(
            settings.landmarks(), settings.regressionSamples(), settings.model().outputDim());
    feedback = new FeedbackTracker(System::currentTimeMillis);
    watched = new WatchedTargets(settings.watchTargets());
    TrainerCheckpoint saved = null;
    for (TrainerCheckpoint c : state.get()) {
      saved = c;
    }
    runId = saved == null ? UUID.randomUUID().toString().substring(0, 8) : saved.runId;
    generation =
        ModelUpdates.Provenance.next(
            saved == null ? 0 : saved.generation,
            getRuntimeContext().getTaskInfo().getAttemptNumber());
    metrics = new StepMetrics(runId, settings.sampler().id(), settings.model().outputDim());
    pairLetters = new PairDeadLetters(settings.pairsTopic(), metrics);
    versions =
        new ModelVersionStore(
            settings.snapshotDir(), runId, settings.seed(), metrics::snapshotWriteFailed);
    updates =
        new ModelUpdates(
            settings,
            new ModelUpdates.Provenance(settings.job(), runId, generation),
            reservoir,
            feedback,
            metrics,
            versions);
    if (saved == null) {
      trainer =
          new DualEncoderTrainer(
              DualEncoder.create(settings.model(), settings.seed()), settings.trainerConfig());
      return;
    }
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
    metrics.restore(saved);
    feedback.restore(saved);
    watched.restore(saved);
    reservoir.restore(saved.reservoir == null ? new TargetFeatures[0] : saved.reservoir);
    if (trainerNegatives != null && saved.negativeCache != null) {
      trainerNegatives.restore(saved.negativeCache);
    }
    updates.restore(saved);
    LOG.info(
        "trainer restored at step {} (model version {}) from checkpoint {}",
        trainer.step(),
        updates.version(),
        saved.checkpointId);
  }

  @Override
  public void open(OpenContext context) {
    // libtorch's thread count is the process's: every operator of this JVM runs with it.
    TorchRuntime.useIntraOpThreads(settings.threads());
    var group = getRuntimeContext().getMetricGroup().addGroup(JobMetrics.GROUP);
    group.gauge(JobMetrics.STEP, () -> trainer == null ? 0 : trainer.step());
    metrics.registerGauges(group);
    group.gauge(JobMetrics.MODEL_VERSION, () -> updates.version());
    group.gauge(JobMetrics.REENCODE_CYCLES, () -> feedback.versionEverywhere());
    group.gauge(JobMetrics.FEEDBACK_LATENCY_STEPS, () -> orNaN(feedback.latencySteps()));
    group.gauge(JobMetrics.FEEDBACK_LATENCY_MS, () -> orNaN(feedback.latencyMs()));
  }

  /** Pairs of the batches skipped because {@code max.steps} was reached, since the run began. */
  long pairsAfterMaxSteps() {
    return metrics.pairsAfterMaxSteps();
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
      metrics.skippedAfterMaxSteps(
          merged.batch.pairIds.length, trainer.step(), settings.maxSteps());
      writeFinalIfDue();
      return;
    }
    QueryBatch batch = merged.batch;
    // The paper trains on uniform negatives before it switches to hard ones: hard negatives of an
    // untrained model are noise, and the index has nothing faithful to offer yet.
    boolean hard = trainer.step() >= settings.uniformWarmupSteps();
    StepInputs inputs = new StepInputs(merged, trainer.encoder(), hard);
    for (int q : inputs.unknownPositives) {
      pairLetters.unknownTarget(batch, q, letter -> ctx.output(DeadLetters.TAG, letter));
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
    if (hard && trainerNegatives != null) {
      TrainerNegatives.Drawn drawn =
          trainerNegatives.draw(
              trainer.encoder(), inputs.queries, inputs.positiveIds, batch.batchId);
      for (TargetFeatures t : drawn.negatives()) {
        inputs.addHardNegative(t, drawn.inclusions().of(t.id));
      }
    }
    watched.count(inputs.negativeIds);
    metrics.aboutToStep();
    StepResult result;
    try {
      faults.beforeStep(trainer.step() + 1);
      result = trainer.step(inputs.batch(settings.negativesCorrection()));
    } catch (SkippedStep e) {
      // A non-finite loss or gradient leaves the parameters untouched.
      pairLetters.refused(
          batch,
          inputs.trainedPairs,
          trainer.step() + 1,
          e.getMessage(),
          letter -> ctx.output(DeadLetters.TAG, letter));
      return;
    }
    if (trainerNegatives != null) {
      trainerNegatives.addPositives(trainer.encoder(), inputs.positiveTargets);
    }
    // A shard can answer with a version of a lost branch (numbered above this trainer's) until the
    // update after a restore reaches it: it holds "this version or newer" only in number.
    if (feedback.observed(Math.min(merged.minModelVersion, updates.version()), result.step())) {
      LOG.info(
          "step {}: model update {} reached every shard: batch {} is the first sampled with it, {}"
              + " steps and {} ms after it was emitted",
          result.step(),
          feedback.versionEverywhere(),
          batch.batchId,
          feedback.latencySteps(),
          Math.round(feedback.latencyMs()));
    }
    if (updates.due(result.step())) {
      ModelUpdate update = updates.next(trainer.encoder(), result.step(), batch.batchId);
      if (update != null) {
        ctx.output(MODEL_UPDATES, update);
        faults.afterModelUpdate(update.getVersion());
      }
    }
    if (settings.keepModelEvery() > 0 && result.step() % settings.keepModelEvery() == 0) {
      versions.keep(trainer.encoder(), result.step());
    }
    writeFinalIfDue();
    out.collect(
        metrics.stepped(
            result,
            merged,
            inputs.trainedPairs,
            inputs.negativeIds.size(),
            arrived,
            updates.version(),
            feedback,
            watched.counts(),
            negativeMiningBytes(merged)));
  }

  /**
   * Bytes a deployment of the sampler holds on the trainer's accelerator for mining (the paper's
   * Mem % numerator): the shards' full-dimension pools, the negative cache, or for DyNNIBAL the
   * landmarks, the regression data and the map (its Nyström index is CPU memory in the shards).
   */
  private long negativeMiningBytes(MergedBatch merged) {
    MiningFloats footprint =
        new MiningFloats(
            merged.miningFloats,
            trainerNegatives == null ? 0 : trainerNegatives.floats(),
            reencodingFloats);
    return settings.sampler().miningFloats(footprint) * Float.BYTES;
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    writeFinalIfDue();
    TrainerCheckpoint c = new TrainerCheckpoint();
    c.runId = runId;
    c.generation = generation;
    c.checkpointId = context.getCheckpointId();
    updates.save(c);
    feedback.checkpointTaken(context.getCheckpointId());
    feedback.save(c);
    metrics.save(c);
    watched.save(c);
    c.reservoir = reservoir.toArray();
    c.negativeCache = trainerNegatives == null ? null : trainerNegatives.save();
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

  /** At max.steps, the final model unless it is on disk: tried again after a failed write. */
  private void writeFinalIfDue() {
    if (trainer != null && trainer.step() == settings.maxSteps()) {
      versions.writeFinal(trainer.encoder(), trainer.step());
    }
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
