package io.dynnibal.jobs.training;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.features.Features;
import io.dynnibal.schemas.AvroTrust;
import io.dynnibal.schemas.ModelUpdate;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.snapshot.ParameterSnapshots;
import io.dynnibal.training.DualEncoderTrainer;
import io.dynnibal.training.LearningRateSchedule;
import io.dynnibal.training.StepResult;
import io.dynnibal.training.TrainerConfig;
import io.dynnibal.training.TrainingBatch;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
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
 * The trainer (parallelism 1): one DJL step per merged batch with its sampled, uniform and in-batch negatives; every w
 * steps a {@link ReencodeCycle} and a {@link ModelUpdate} for the shards; a {@link TrainingMetrics} record per step.
 *
 * <p>Exactly once: at every checkpoint the parameters and Adam's moments are written as a snapshot and its location
 * goes into operator state with the counters and the reservoir. After a restore, snapshots and model versions newer
 * than the checkpoint (never committed to Kafka: the sinks are transactional) are deleted and re-made.
 */
final class TrainerFunction extends ProcessFunction<MergedBatch, TrainingMetrics>
    implements CheckpointedFunction, CheckpointListener {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(TrainerFunction.class);
  static final String STAGE = "trainer";
  static final OutputTag<ModelUpdate> MODEL_UPDATES =
      new OutputTag<>("model-updates", new AvroTypeInfo<>(ModelUpdate.class));

  private final TrainingJobConfig config;

  private transient DualEncoderTrainer trainer;
  private transient RegressionReservoir reservoir;
  private transient ListState<TrainerCheckpoint> state;
  private transient long version;
  private transient long pairsTrained;
  private transient long pairsDeadLettered;
  private transient long batchesSkipped;
  private transient long lastVersionEverywhere;
  private transient long feedbackSteps;
  private transient double feedbackMs;
  private transient TreeMap<Long, long[]> emitted; // version -> {step, epoch ms}
  private transient double lossAverage;
  private transient long startNanos;
  private transient int stepsThisRun;
  private transient volatile double lastLoss;
  private transient volatile long lastStaleness;
  private transient volatile double lastAcceptance;
  private transient Map<String, Long> watched;

  TrainerFunction(TrainingJobConfig config) {
    this.config = config;
  }

  private TrainerConfig trainerConfig() {
    return new TrainerConfig(new LearningRateSchedule(config.learningRate, config.warmupSteps, config.decaySteps,
        0.05f, 1f), 10f, io.dynnibal.model.AdamSettings.DEFAULT);
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    AvroTrust.install();
    state = context.getOperatorStateStore().getListState(
        new ListStateDescriptor<>("trainer", TypeInformation.of(TrainerCheckpoint.class)));
    reservoir = new RegressionReservoir(config.regressionSamples);
    watched = new LinkedHashMap<>();
    for (String id : config.watchTargets.split(",")) {
      if (!id.isBlank()) {
        watched.put(id.trim(), 0L);
      }
    }
    emitted = new TreeMap<>();
    feedbackSteps = -1;
    feedbackMs = -1;
    TrainerCheckpoint saved = null;
    for (TrainerCheckpoint c : state.get()) {
      saved = c;
    }
    if (saved == null) {
      deleteVersionsAbove(modelBase(), 0);
      trainer = new DualEncoderTrainer(DualEncoder.create(config.model(), config.seed), trainerConfig());
      return;
    }
    trainer = ParameterSnapshots.readTrainer(URI.create(saved.snapshotUri), trainerConfig());
    version = saved.version;
    pairsTrained = saved.pairsTrained;
    pairsDeadLettered = saved.pairsDeadLettered;
    batchesSkipped = saved.batchesSkipped;
    lastVersionEverywhere = saved.lastVersionEverywhere;
    feedbackSteps = saved.feedbackSteps;
    feedbackMs = saved.feedbackMs;
    reservoir.restore(saved.reservoir == null ? new TargetFeatures[0] : saved.reservoir);
    for (int i = 0; saved.watchedIds != null && i < saved.watchedIds.length; i++) {
      if (watched.containsKey(saved.watchedIds[i])) {
        watched.put(saved.watchedIds[i], saved.watchedCounts[i]);
      }
    }
    for (int i = 0; saved.emittedVersions != null && i < saved.emittedVersions.length; i++) {
      emitted.put(saved.emittedVersions[i], new long[] {saved.emittedSteps[i], saved.emittedMs[i]});
    }
    // Versions written after this checkpoint were never committed: the shards never saw them. Make them again.
    deleteVersionsAbove(modelBase(), version);
    deleteVersionsAbove(stateBase(), saved.checkpointId);
    LOG.info("trainer restored at step {} (model version {}) from {}", trainer.step(), version, saved.snapshotUri);
  }

  @Override
  public void open(org.apache.flink.api.common.functions.OpenContext context) {
    var metrics = getRuntimeContext().getMetricGroup();
    metrics.gauge("step", () -> trainer == null ? 0 : trainer.step());
    metrics.gauge("loss", () -> lastLoss);
    metrics.gauge("cacheStalenessSteps", () -> lastStaleness);
    metrics.gauge("mhAcceptanceRate", () -> lastAcceptance);
    metrics.gauge("modelVersion", () -> version);
    startNanos = System.nanoTime();
  }

  @Override
  public void processElement(MergedBatch merged, Context ctx, Collector<TrainingMetrics> out) throws Exception {
    if (config.maxSteps > 0 && trainer.step() >= config.maxSteps) {
      batchesSkipped++;
      return;
    }
    QueryBatch batch = merged.batch;
    DualEncoder encoder = trainer.encoder();
    List<Features> queries = new ArrayList<>();
    List<String> positiveIds = new ArrayList<>();
    List<Features> positives = new ArrayList<>();
    for (int q = 0; q < batch.size(); q++) {
      TargetFeatures positive = merged.positives[q];
      if (positive.id == null) {
        pairsDeadLettered++;
        ctx.output(DeadLetters.TAG, DeadLetters.ofPair(config.pairsTopic(), batch.pairIds[q],
            "pair " + batch.pairIds[q] + ": target_id \"" + batch.targetIds[q] + "\" is not in the index"
                + " (unknown, deleted, or not indexed yet)", STAGE));
        continue;
      }
      queries.add(encoder.featurize(batch.queryTexts[q]));
      positiveIds.add(positive.id);
      positives.add(positive.features());
    }
    if (queries.isEmpty()) {
      batchesSkipped++;
      return;
    }
    List<String> negativeIds = new ArrayList<>();
    List<Features> negatives = new ArrayList<>();
    for (TargetFeatures t : merged.sampled) {
      negativeIds.add(t.id);
      negatives.add(t.features());
    }
    for (TargetFeatures t : merged.uniform) {
      negativeIds.add(t.id);
      negatives.add(t.features());
      reservoir.add(t);
    }
    for (String id : negativeIds) {
      watched.computeIfPresent(id, (k, n) -> n + 1);
    }
    StepResult result = trainer.step(new TrainingBatch(queries, positiveIds, positives, negativeIds, negatives));
    stepsThisRun++;
    pairsTrained += queries.size();
    lastLoss = result.loss();
    lossAverage = stepsThisRun == 1 ? result.loss() : 0.9 * lossAverage + 0.1 * result.loss();
    lastStaleness = result.step() - merged.minModelStep;
    lastAcceptance = merged.proposals == 0 ? Double.NaN : merged.accepted / (double) merged.proposals;
    recordFeedback(merged.minModelVersion, result.step());
    if (result.step() - stepOf(version) >= config.reencodeEvery) {
      // Due every w steps; a cycle that lacks regression data at the current version waits for the next step.
      maybePublishUpdate(ctx, result.step());
    }
    out.collect(metrics(result, merged));
  }

  private long stepOf(long v) {
    long[] e = emitted.get(v);
    return e == null ? 0 : e[0];
  }

  private void maybePublishUpdate(Context ctx, long step) {
    ModelUpdate update = ReencodeCycle.build(trainer.encoder(), reservoir.atVersion(version), config.landmarks,
        version + 1, step, modelBase(), config.seed);
    if (update == null) {
      return; // not enough regression data cached at the current version yet: try again next step
    }
    version++;
    emitted.put(version, new long[] {step, System.currentTimeMillis()});
    while (emitted.size() > 64) {
      emitted.pollFirstEntry();
    }
    ctx.output(MODEL_UPDATES, update);
    LOG.info("step {}: model update {} emitted ({})", step, version, update.getSnapshotUri());
  }

  private void recordFeedback(long versionEverywhere, long step) {
    if (versionEverywhere <= lastVersionEverywhere) {
      return;
    }
    lastVersionEverywhere = versionEverywhere;
    long[] e = emitted.get(versionEverywhere);
    if (e != null) {
      feedbackSteps = step - e[0];
      feedbackMs = System.currentTimeMillis() - e[1];
    }
  }

  private TrainingMetrics metrics(StepResult result, MergedBatch merged) {
    Map<String, Double> latency = new LinkedHashMap<>();
    for (int s = 0; s < merged.shardMillis.length; s++) {
      latency.put(Integer.toString(s), merged.shardMillis[s]);
    }
    double seconds = (System.nanoTime() - startNanos) / 1e9;
    return TrainingMetrics.newBuilder()
        .setStep(result.step())
        .setModelVersion(version)
        .setTimeMs(System.currentTimeMillis())
        .setSampler(config.sampler)
        .setLoss(result.loss())
        .setLearningRate(result.learningRate())
        .setStepsPerSecond(seconds > 0 ? stepsThisRun / seconds : 0)
        .setCacheStalenessSteps(lastStaleness)
        .setMhAcceptanceRate(Double.isNaN(lastAcceptance) ? null : lastAcceptance)
        .setShardSamplingLatencyMs(latency)
        .setEvalRecall(new HashMap<>())
        .setEvalMrr(new HashMap<>())
        .setPairsTrained(pairsTrained)
        .setPairsDeadLettered(pairsDeadLettered)
        .setIndexTargets(merged.indexTargets)
        .setReencodeCycles(lastVersionEverywhere)
        .setFeedbackLatencySteps(feedbackSteps < 0 ? null : feedbackSteps)
        .setFeedbackLatencyMs(feedbackMs < 0 ? null : feedbackMs)
        .setWatchedNegatives(new LinkedHashMap<>(watched))
        .build();
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    URI uri = ParameterSnapshots.write(trainer, stateBase(), context.getCheckpointId(), config.seed);
    TrainerCheckpoint c = new TrainerCheckpoint();
    c.snapshotUri = uri.toString();
    c.checkpointId = context.getCheckpointId();
    c.version = version;
    c.pairsTrained = pairsTrained;
    c.pairsDeadLettered = pairsDeadLettered;
    c.batchesSkipped = batchesSkipped;
    c.lastVersionEverywhere = lastVersionEverywhere;
    c.feedbackSteps = feedbackSteps;
    c.feedbackMs = feedbackMs;
    c.reservoir = reservoir.toArray();
    c.watchedIds = watched.keySet().toArray(new String[0]);
    c.watchedCounts = watched.values().stream().mapToLong(Long::longValue).toArray();
    c.emittedVersions = emitted.keySet().stream().mapToLong(Long::longValue).toArray();
    c.emittedSteps = emitted.values().stream().mapToLong(e -> e[0]).toArray();
    c.emittedMs = emitted.values().stream().mapToLong(e -> e[1]).toArray();
    state.update(List.of(c));
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) {
    // Keep the trainer states of the last two completed checkpoints (a restore may use either), drop older ones.
    deleteVersionsBelow(stateBase(), checkpointId - 1);
  }

  private URI modelBase() {
    return ParameterSnapshots.parse(config.snapshotDir);
  }

  private URI stateBase() {
    return ParameterSnapshots.parse(Path.of(ParameterSnapshots.toPath(modelBase()).toString(), "trainer-state")
        .toString());
  }

  static void deleteVersionsAbove(URI base, long version) {
    forEachVersion(base, (v, dir) -> v > version, "newer than the restored state");
  }

  static void deleteVersionsBelow(URI base, long version) {
    forEachVersion(base, (v, dir) -> v < version, null);
  }

  private static void forEachVersion(URI base, java.util.function.BiPredicate<Long, Path> doomed, String why) {
    Path dir = ParameterSnapshots.toPath(base);
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (Stream<Path> entries = Files.list(dir)) {
      for (Path p : entries.toList()) {
        String name = p.getFileName().toString();
        if (!name.matches("model-\\d+")) {
          continue;
        }
        long v = Long.parseLong(name.substring("model-".length()));
        if (doomed.test(v, p)) {
          if (why != null) {
            LOG.info("deleting {} ({})", p, why);
          }
          try (Stream<Path> files = Files.walk(p)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
          }
        }
      }
    } catch (IOException e) {
      LOG.warn("could not clean up {}: {}", dir, e.toString());
    }
  }

  @Override
  public void close() {
    if (trainer != null) {
      trainer.encoder().close();
      trainer = null;
    }
  }
}
