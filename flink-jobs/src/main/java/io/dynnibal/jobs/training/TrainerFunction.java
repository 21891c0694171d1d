package io.dynnibal.jobs.training;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.NegativeCache;
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
 * The trainer (parallelism 1): one DJL step per merged batch with its sampled, uniform and in-batch
 * negatives; every w steps a {@link ReencodeCycle} and a {@link ModelUpdate} for the shards; a
 * {@link TrainingMetrics} record per step.
 *
 * <p>Exactly once: at every checkpoint the parameters and Adam's moments go into operator state
 * (the bytes of a parameter snapshot) with the counters and the reservoir. After a restore, model
 * versions newer than the checkpoint (never committed to Kafka: the sinks are transactional) are
 * deleted and made again. Model versions live in a directory of their own per run ({@code <snapshot
 * dir>/run-<id>/model-<version>}); a version is deleted once a completed checkpoint shows that
 * every shard holds a newer one.
 */
final class TrainerFunction extends ProcessFunction<MergedBatch, TrainingMetrics>
    implements CheckpointedFunction, CheckpointListener {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(TrainerFunction.class);
  static final String STAGE = "trainer";
  static final OutputTag<ModelUpdate> MODEL_UPDATES =
      new OutputTag<>("model-updates", new AvroTypeInfo<>(ModelUpdate.class));

  private final TrainingJobConfig config;
  private final FaultInjection faults;

  private transient DualEncoderTrainer trainer;
  private transient RegressionReservoir reservoir;
  private transient NegativeCache<TargetFeatures> negativeCache;
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
  private transient String runId;
  private transient TreeMap<Long, Long> versionEverywhereAtCheckpoint;

  TrainerFunction(TrainingJobConfig config, FaultInjection faults) {
    this.config = config;
    this.faults = faults;
  }

  private TrainerConfig trainerConfig() {
    return new TrainerConfig(
        new LearningRateSchedule(
            config.learningRate, config.warmupSteps, config.decaySteps, 0.05f, 1f),
        10f,
        io.dynnibal.model.AdamSettings.DEFAULT);
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    AvroTrust.install();
    state =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>("trainer", TypeInformation.of(TrainerCheckpoint.class)));
    reservoir = new RegressionReservoir(config.regressionSamples);
    if (config.sampler() == Sampler.NEGATIVE_CACHE) {
      negativeCache = new NegativeCache<>(config.negativeCacheSize, config.outputDim);
    }
    watched = new LinkedHashMap<>();
    for (String id : config.watchTargets.split(",")) {
      if (!id.isBlank()) {
        watched.put(id.trim(), 0L);
      }
    }
    emitted = new TreeMap<>();
    feedbackSteps = -1;
    feedbackMs = -1;
    versionEverywhereAtCheckpoint = new TreeMap<>();
    TrainerCheckpoint saved = null;
    for (TrainerCheckpoint c : state.get()) {
      saved = c;
    }
    if (saved == null) {
      runId = java.util.UUID.randomUUID().toString().substring(0, 8);
      trainer =
          new DualEncoderTrainer(DualEncoder.create(config.model(), config.seed), trainerConfig());
      return;
    }
    runId = saved.runId;
    trainer = restoreTrainer(saved);
    version = saved.version;
    pairsTrained = saved.pairsTrained;
    pairsDeadLettered = saved.pairsDeadLettered;
    batchesSkipped = saved.batchesSkipped;
    lastVersionEverywhere = saved.lastVersionEverywhere;
    feedbackSteps = saved.feedbackSteps;
    feedbackMs = saved.feedbackMs;
    reservoir.restore(saved.reservoir == null ? new TargetFeatures[0] : saved.reservoir);
    if (negativeCache != null && saved.negativeCache != null) {
      for (TargetFeatures t : saved.negativeCache) {
        negativeCache.add(t.id, t.withoutCache(0f), t.cache);
      }
    }
    for (int i = 0; saved.watchedIds != null && i < saved.watchedIds.length; i++) {
      if (watched.containsKey(saved.watchedIds[i])) {
        watched.put(saved.watchedIds[i], saved.watchedCounts[i]);
      }
    }
    for (int i = 0; saved.emittedVersions != null && i < saved.emittedVersions.length; i++) {
      emitted.put(saved.emittedVersions[i], new long[] {saved.emittedSteps[i], saved.emittedMs[i]});
    }
    // Versions written after this checkpoint were never committed: the shards never saw them. Make
    // them again.
    deleteVersionsAbove(modelBase(), version);
    LOG.info(
        "trainer restored at step {} (model version {}) from checkpoint {}",
        trainer.step(),
        version,
        saved.checkpointId);
  }

  @Override
  public void open(org.apache.flink.api.common.functions.OpenContext context) {
    var metrics = getRuntimeContext().getMetricGroup();
    metrics.gauge("step", () -> trainer == null ? 0 : trainer.step());
    metrics.gauge("loss", () -> lastLoss);
    metrics.gauge("cacheStalenessSteps", () -> lastStaleness);
    metrics.gauge("mhAcceptanceRate", () -> lastAcceptance);
    metrics.gauge("modelVersion", () -> version);
    startNanos = -1; // set by the first batch: indexing before it is not training time
  }

  @Override
  public void processElement(MergedBatch merged, Context ctx, Collector<TrainingMetrics> out)
      throws Exception {
    if (config.maxSteps > 0 && trainer.step() >= config.maxSteps) {
      batchesSkipped++;
      return;
    }
    QueryBatch batch = merged.batch;
    DualEncoder encoder = trainer.encoder();
    List<Features> queries = new ArrayList<>();
    List<String> positiveIds = new ArrayList<>();
    List<Features> positives = new ArrayList<>();
    List<TargetFeatures> positiveTargets = new ArrayList<>();
    List<String> trainedPairs = new ArrayList<>();
    for (int q = 0; q < batch.size(); q++) {
      TargetFeatures positive = merged.positives[q];
      if (positive.id == null) {
        pairsDeadLettered++;
        ctx.output(
            DeadLetters.TAG,
            DeadLetters.ofDecoded(
                config.pairsTopic(),
                batch.pairIds[q],
                "pair "
                    + batch.pairIds[q]
                    + ": target_id \""
                    + batch.targetIds[q]
                    + "\" is not in the index"
                    + " (unknown, deleted, or not indexed yet)",
                STAGE));
        continue;
      }
      queries.add(encoder.featurize(batch.queryTexts[q]));
      trainedPairs.add(batch.pairIds[q]);
      positiveIds.add(positive.id);
      positives.add(positive.features());
      positiveTargets.add(positive);
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
    if (negativeCache != null) {
      for (TargetFeatures t : fromNegativeCache(queries, positiveIds, batch.batchId)) {
        negativeIds.add(t.id);
        negatives.add(t.features());
      }
    }
    for (String id : negativeIds) {
      watched.computeIfPresent(id, (k, n) -> n + 1);
    }
    if (startNanos < 0) {
      startNanos = System.nanoTime();
    }
    faults.beforeStep(trainer.step() + 1);
    StepResult result;
    try {
      result =
          trainer.step(new TrainingBatch(queries, positiveIds, positives, negativeIds, negatives));
    } catch (IllegalStateException e) {
      // A non-finite loss leaves the parameters untouched; the batch is reported and skipped,
      // training goes on.
      batchesSkipped++;
      ctx.output(
          DeadLetters.TAG,
          DeadLetters.ofDecoded(
              config.pairsTopic(),
              "batch-" + batch.batchId,
              "batch " + batch.batchId + " skipped: " + e.getMessage(),
              STAGE));
      return;
    }
    stepsThisRun++;
    pairsTrained += queries.size();
    if (negativeCache != null) {
      // The batch's positives enter the cache with their embeddings under the parameters just
      // updated.
      float[][] embedded = trainer.encoder().encodeTargets(positives);
      for (int i = 0; i < positives.size(); i++) {
        negativeCache.add(positiveIds.get(i), positiveTargets.get(i), embedded[i]);
      }
    }
    lastLoss = result.loss();
    lossAverage = stepsThisRun == 1 ? result.loss() : 0.9 * lossAverage + 0.1 * result.loss();
    lastStaleness = result.step() - merged.minModelStep;
    lastAcceptance =
        merged.proposals == 0 ? Double.NaN : merged.accepted / (double) merged.proposals;
    recordFeedback(merged.minModelVersion, result.step());
    // In-batch negatives need nothing from the shards but positives: no model updates (and no
    // uniform draws to fit).
    if (config.sampler() != Sampler.IN_BATCH
        && result.step() - stepOf(version) >= config.reencodeEvery) {
      // Due every w steps; a cycle that lacks regression data at the current version waits for the
      // next step.
      maybePublishUpdate(ctx, result.step());
    }
    if (config.keepModelEvery > 0 && result.step() % config.keepModelEvery == 0) {
      keepModel(result.step());
    }
    if (result.step() == config.maxSteps) {
      writeFinalModel(result.step());
    }
    out.collect(metrics(result, merged, trainedPairs));
  }

  /**
   * Negative cache: each query draws {@code negatives.per.query} targets from the softmax over the
   * cache (its current query embedding against the cached, stale target embeddings), its own
   * positive excluded; the batch shares them round-robin like the shards' hard negatives.
   */
  private List<TargetFeatures> fromNegativeCache(
      List<Features> queries, List<String> positiveIds, long batchId) {
    if (negativeCache.size() == 0) {
      return List.of();
    }
    java.util.SplittableRandom random =
        new java.util.SplittableRandom(config.seed * 0x2545F4914F6CDD1DL + batchId);
    float[][] embedded = trainer.encoder().encodeQueries(queries);
    List<List<NegativeCache.Entry<TargetFeatures>>> drawn =
        negativeCache.sample(
            trainer.encoder().manager(),
            embedded,
            config.negativesPerQuery,
            config.scoreScale,
            random);
    List<List<TargetFeatures>> perQuery = new ArrayList<>();
    for (int q = 0; q < drawn.size(); q++) {
      List<TargetFeatures> candidates = new ArrayList<>();
      for (NegativeCache.Entry<TargetFeatures> e : drawn.get(q)) {
        if (!e.id().equals(positiveIds.get(q))) {
          candidates.add(e.payload());
        }
      }
      perQuery.add(candidates);
    }
    return SharedNegatives.roundRobin(perQuery, config.sampledNegatives, t -> t.id);
  }

  /**
   * Bytes a deployment of the sampler holds on the trainer's accelerator for mining (the paper's
   * Mem % numerator): the shards' full-dimension pools, the negative cache, or for DyNNIBAL the
   * landmarks, the regression data and the map (its Nyström index is CPU memory in the shards).
   */
  private long negativeMiningBytes(MergedBatch merged) {
    long floats =
        switch (config.sampler().mining) {
          case SHARD_POOL -> merged.miningFloats;
          case TRAINER_CACHE -> negativeCache.floats();
          case SHARD_TREE ->
              (long) (config.landmarks + config.regressionSamples) * config.outputDim
                  + (long) config.landmarks * config.landmarks;
          case NONE -> 0;
        };
    return floats * Float.BYTES;
  }

  /** Every {@code keep.model.every} steps: {@code <snapshot dir>/run-<id>/kept/model-<step>}. */
  private void keepModel(long step) {
    URI base = ParameterSnapshots.toPath(modelBase()).resolve("kept").toUri();
    if (!Files.exists(ParameterSnapshots.toPath(ParameterSnapshots.locate(base, step)))) {
      ParameterSnapshots.write(trainer.encoder(), base, step, config.seed);
    }
  }

  /**
   * At {@code max.steps} the trained encoder is written to {@code <snapshot
   * dir>/run-<id>/final/model-<step>}: what a user evaluates or serves. (A replay after a restore
   * finds it written already.)
   */
  private void writeFinalModel(long step) {
    URI base = ParameterSnapshots.toPath(modelBase()).resolve("final").toUri();
    if (!Files.exists(ParameterSnapshots.toPath(ParameterSnapshots.locate(base, step)))) {
      URI uri = ParameterSnapshots.write(trainer.encoder(), base, step, config.seed);
      LOG.info("step {}: max.steps reached, final model written to {}", step, uri);
    }
  }

  private long stepOf(long v) {
    long[] e = emitted.get(v);
    return e == null ? 0 : e[0];
  }

  private void maybePublishUpdate(Context ctx, long step) {
    ModelUpdate update;
    try {
      update =
          ReencodeCycle.build(
              trainer.encoder(),
              reservoir.atVersion(version),
              config.landmarks,
              version + 1,
              step,
              modelBase(),
              config.seed);
    } catch (IllegalStateException e) {
      LOG.warn("step {}: re-encode cycle skipped: {}", step, e.getMessage());
      return;
    }
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

  private TrainingMetrics metrics(
      StepResult result, MergedBatch merged, List<String> trainedPairs) {
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
        .setPairIds(trainedPairs)
        .setModelUpdatesIgnored(merged.updatesIgnored)
        .setNegativeMiningBytes(negativeMiningBytes(merged))
        .setFullDimensionBytes(merged.indexTargets * config.outputDim * Float.BYTES)
        .build();
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    TrainerCheckpoint c = new TrainerCheckpoint();
    c.runId = runId;
    Map<String, byte[]> files = ParameterSnapshots.toBytes(trainer, trainer.step(), config.seed);
    c.fileNames = files.keySet().toArray(new String[0]);
    c.fileContents = files.values().toArray(new byte[0][]);
    c.checkpointId = context.getCheckpointId();
    versionEverywhereAtCheckpoint.put(context.getCheckpointId(), lastVersionEverywhere);
    c.version = version;
    c.pairsTrained = pairsTrained;
    c.pairsDeadLettered = pairsDeadLettered;
    c.batchesSkipped = batchesSkipped;
    c.lastVersionEverywhere = lastVersionEverywhere;
    c.feedbackSteps = feedbackSteps;
    c.feedbackMs = feedbackMs;
    c.reservoir = reservoir.toArray();
    if (negativeCache != null) {
      c.negativeCache =
          negativeCache.entries().stream()
              .map(
                  e -> {
                    TargetFeatures t = e.payload().withoutCache(0f);
                    t.cache = e.embedding();
                    return t;
                  })
              .toArray(TargetFeatures[]::new);
    }
    c.watchedIds = watched.keySet().toArray(new String[0]);
    c.watchedCounts = watched.values().stream().mapToLong(Long::longValue).toArray();
    c.emittedVersions = emitted.keySet().stream().mapToLong(Long::longValue).toArray();
    c.emittedSteps = emitted.values().stream().mapToLong(e -> e[0]).toArray();
    c.emittedMs = emitted.values().stream().mapToLong(e -> e[1]).toArray();
    state.update(List.of(c));
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) {
    // In this checkpoint every shard holds at least version v (the trainer saw batches sampled with
    // it from all of
    // them), so no restore from it or a later one needs an older version; one more is kept as a
    // margin.
    Long everywhere = versionEverywhereAtCheckpoint.get(checkpointId);
    versionEverywhereAtCheckpoint.headMap(checkpointId, true).clear();
    if (everywhere != null && everywhere > 1) {
      deleteVersionsBelow(modelBase(), everywhere - 1);
    }
  }

  private DualEncoderTrainer restoreTrainer(TrainerCheckpoint saved) {
    Map<String, byte[]> files = new LinkedHashMap<>();
    for (int i = 0; i < saved.fileNames.length; i++) {
      files.put(saved.fileNames[i], saved.fileContents[i]);
    }
    return ParameterSnapshots.readTrainer(files, trainerConfig());
  }

  /** This run's model versions: {@code <snapshot dir>/run-<id>/}. */
  private URI modelBase() {
    return ParameterSnapshots.toPath(ParameterSnapshots.parse(config.snapshotDir))
        .resolve("run-" + runId)
        .toUri();
  }

  static void deleteVersionsAbove(URI base, long version) {
    forEachVersion(base, (v, dir) -> v > version, "newer than the restored state");
  }

  static void deleteVersionsBelow(URI base, long version) {
    forEachVersion(base, (v, dir) -> v < version, null);
  }

  private static void forEachVersion(
      URI base, java.util.function.BiPredicate<Long, Path> doomed, String why) {
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
          io.dynnibal.snapshot.Directories.deleteRecursively(p);
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
