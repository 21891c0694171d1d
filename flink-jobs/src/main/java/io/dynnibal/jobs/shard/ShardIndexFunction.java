package io.dynnibal.jobs.shard;

import io.dynnibal.index.VectorMath;
import io.dynnibal.index.nystrom.CacheMap;
import io.dynnibal.index.sgtree.TreeRepair;
import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.NegativesPool;
import io.dynnibal.schemas.AvroTrust;
import io.dynnibal.schemas.Matrices;
import io.dynnibal.schemas.ModelUpdate;
import io.dynnibal.state.CacheMigration;
import io.dynnibal.state.ExactRefinement;
import io.dynnibal.state.NamedPositives;
import io.dynnibal.state.ShardIndex;
import io.dynnibal.state.ShardTargets;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.state.TreeFrame;
import io.dynnibal.stream.DeadLetters;
import io.dynnibal.stream.JobMetrics;
import io.dynnibal.stream.QueryBatch;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.formats.avro.typeutils.AvroTypeInfo;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shard of the index per key: targets join and leave at any time, query batches get negatives,
 * model updates move the whole cache and repair the tree.
 *
 * <p>State: {@link ShardTargets} (RocksDB map state, id -> text + cache vector at the version it
 * was written, and per key the maps from those versions to the current one) is the truth; the SG
 * tree of each shard is a heap cache of it ({@link ShardIndex}), rebuilt from it on the first use
 * after a start or restore, on the shape each checkpoint keeps of it ({@link TreeShapes}). Each
 * shard key keeps the model update it is at in keyed state (every key receives its own copy of an
 * update); the encoder and projection of a version ({@link ShardModel}) are loaded from it once per
 * subtask.
 *
 * <p>Targets and queries are encoded here, with the version the shard holds, so a shard's cache and
 * its queries are always of one version and each reply says which. New and changed targets are
 * stored at once (text, no cache vector yet) and encoded in groups of {@value #ENCODE_BATCH}:
 * before the shard answers a batch, when a group is full, or {@value #ENCODE_DELAY_MS} ms after the
 * first one waiting. One forward pass per group instead of per target is what makes indexing fast;
 * a restore encodes whatever was still waiting in its state.
 *
 * <p>Hard negatives come from a {@link HardNegativeMiner}; model updates are applied by {@link
 * CacheMigration}. An update whose version is not above the current one is a duplicate and ignored.
 */
public final class ShardIndexFunction
    extends KeyedCoProcessFunction<Integer, ShardInput, ShardInput, ShardReply>
    implements CheckpointedFunction {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(ShardIndexFunction.class);
  static final String STAGE = "shard-index";
  private static final ValueStateDescriptor<ModelUpdate> MODEL =
      new ValueStateDescriptor<>("model", new AvroTypeInfo<>(ModelUpdate.class));

  /** Versions loaded at once in a subtask: its keys move from one to the next update together. */
  private static final int MODELS_KEPT = 2;

  static final int ENCODE_BATCH = 512;
  static final long ENCODE_DELAY_MS = 200;

  private final ShardSettings settings;
  private final int[] shardKeys;

  private transient ShardTargets targets;
  private transient NamedPositives named;
  private transient ExactRefinement refinement;

  /**
   * Keys that answer one batch at an exact update's version before their pass takes its first
   * group: the merge needs every shard at the version, and a shard that took the update a batch
   * after another would otherwise answer its first batch behind the other's first group.
   */
  private transient Set<Integer> passStartsAfterNextBatch;

  private transient ValueState<ModelUpdate> currentUpdate;
  private transient Map<Integer, ShardIndex> indexes;

  /** Each key's tree shape, saved with checkpoints and read back at a restore. */
  private transient TreeShapes shapes;

  /** The model of the version the current key holds (set by {@link #ensureModel}). */
  private transient ShardModel model;

  /** The versions this subtask has loaded, by version (at most {@value #MODELS_KEPT}). */
  private transient java.util.TreeMap<Long, ShardModel> models;

  private transient HardNegativeMiner miner;
  private transient FidelityProbe fidelity;

  /** Per shard key, targets stored without a cache vector yet (waiting to be encoded together). */
  private transient Map<Integer, LinkedHashSet<String>> unencoded;

  private transient AtomicLong indexedTargets;
  private transient Counter updatesApplied;
  private transient Counter duplicateUpdates;
  private transient Counter targetsRepaired;
  private transient volatile double lastSamplingMillis;

  /** The batch this subtask answered last (-1: none yet), for the logs of model updates. */
  private transient long lastBatchAnswered;

  private transient volatile double indexBuildMillis;
  private transient volatile int treesFromShape;

  public ShardIndexFunction(ShardSettings settings, int[] shardKeys) {
    this.settings = settings;
    this.shardKeys = shardKeys;
  }

  @Override
  public void open(OpenContext context) {
    AvroTrust.install();
    // Featurizing depends on the configuration only, not on a version's weights: any loaded
    // version's encoder does (there is one whenever a target is encoded or shipped).
    targets =
        new ShardTargets(
            getRuntimeContext().getMapState(ShardTargets.DESCRIPTOR),
            getRuntimeContext().getState(ShardTargets.BASES),
            t -> {
              Features f = models.lastEntry().getValue().encoder.featurizeTarget(t.text);
              t.featureIds = f.ids();
              t.featureWeights = f.weights();
            });
    named = new NamedPositives(getRuntimeContext().getMapState(NamedPositives.DESCRIPTOR));
    currentUpdate = getRuntimeContext().getState(MODEL);
    refinement = new ExactRefinement(getRuntimeContext().getState(ExactRefinement.DUE_BEFORE));
    lastBatchAnswered = -1;
    models = new java.util.TreeMap<>();
    indexes = new HashMap<>();
    passStartsAfterNextBatch = new HashSet<>();
    if (shapes == null) { // a harness that initializes no state
      shapes = TreeShapes.none();
    }
    unencoded = new HashMap<>();
    indexedTargets = new AtomicLong();
    var metrics = getRuntimeContext().getMetricGroup().addGroup(JobMetrics.GROUP);
    metrics.gauge(JobMetrics.INDEX_TARGETS, () -> indexedTargets.get());
    metrics.gauge(JobMetrics.SAMPLING_MILLIS, () -> lastSamplingMillis);
    metrics.gauge(JobMetrics.INDEX_BUILD_MILLIS, () -> indexBuildMillis);
    metrics.gauge(JobMetrics.INDEX_TREES_FROM_SHAPE, () -> treesFromShape);
    updatesApplied = metrics.counter(JobMetrics.MODEL_UPDATES_APPLIED);
    duplicateUpdates = metrics.counter(JobMetrics.MODEL_UPDATES_IGNORED);
    targetsRepaired = metrics.counter(JobMetrics.REPAIR_TARGETS_MOVED);
    miner = HardNegativeMiner.of(settings, metrics.counter(JobMetrics.SAMPLING_GAVE_UP));
    fidelity = miner == null ? null : FidelityProbe.of(settings, miner);
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    shapes = TreeShapes.restore(context.getOperatorStateStore(), getRuntimeContext().getTaskInfo());
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    shapes.save(indexes, unencoded);
  }

  @Override
  public void processElement1(ShardInput in, Context ctx, Collector<ShardReply> out)
      throws Exception {
    int key = ctx.getCurrentKey();
    ensureModel(currentUpdate.value());
    ShardIndex index = index(key);
    switch (in.kind) {
      case ShardInput.UPSERT -> {
        targets.store(in.targetId, in.text, model.version);
        LinkedHashSet<String> waiting = unencoded.computeIfAbsent(key, k -> new LinkedHashSet<>());
        if (waiting.isEmpty()) {
          long now = ctx.timerService().currentProcessingTime();
          ctx.timerService().registerProcessingTimeTimer(now + ENCODE_DELAY_MS);
        }
        waiting.add(in.targetId);
        if (waiting.size() >= ENCODE_BATCH) {
          encodeWaiting(key, index, ctx);
        }
      }
      case ShardInput.DELETE -> {
        targets.remove(in.targetId, model.version);
        unencoded.getOrDefault(key, new LinkedHashSet<>()).remove(in.targetId);
        if (index.delete(in.targetId)) {
          indexedTargets.decrementAndGet();
        }
      }
      case ShardInput.QUERIES -> {
        encodeWaiting(key, index, ctx);
        admitPositives(key, index, in.batch);
        out.collect(answer(key, index, in.batch));
        // After the answer: the batch that first carries an update is not held for a group.
        refine(key, index);
      }
      default -> throw new IllegalStateException("unknown shard input kind " + in.kind);
    }
  }

  @Override
  public void onTimer(long timestamp, OnTimerContext ctx, Collector<ShardReply> out)
      throws Exception {
    ensureModel(currentUpdate.value());
    int key = ctx.getCurrentKey();
    encodeWaiting(key, index(key), ctx);
  }

  /**
   * Encodes the key's waiting targets with the current model in one pass, then indexes them. A
   * target that encodes to a non-finite vector leaves the shard, with a dead letter.
   */
  private void encodeWaiting(int key, ShardIndex index, Context ctx) throws Exception {
    LinkedHashSet<String> waiting = unencoded.get(key);
    if (waiting == null || waiting.isEmpty()) {
      return;
    }
    List<TargetFeatures> group = new ArrayList<>(waiting.size());
    for (String id : waiting) {
      TargetFeatures t = targets.withFeatures(id);
      if (t != null && t.cache == null) {
        group.add(t);
      }
    }
    waiting.clear();
    List<TargetFeatures> usable = new ArrayList<>(group.size());
    long flattened = index.framesFlattened();
    for (TargetFeatures t : encode(model, group)) {
      if (!VectorMath.isFinite(t.cache)) {
        targets.remove(t.id, model.version);
        if (index.delete(t.id)) {
          indexedTargets.decrementAndGet();
        }
        String why =
            "target "
                + t.id
                + " encodes to a non-finite vector at model version "
                + model.version
                + "; it is not in the index";
        ctx.output(
            DeadLetters.TAG, DeadLetters.ofDecoded(settings.targetsTopic(), t.id, why, STAGE));
        continue;
      }
      usable.add(t);
      // One by one: bulk-building a growing tree anew (SgTreeBuilder) was no faster for a shard
      // loading half a million targets, and its trees sampled three times slower than inserted
      // ones on that data (bench scale).
      boolean isNew = !index.contains(t.id);
      if (!positivesOnly() || named.contains(t.id) || unnamedAdmitted(t.id, model.version)) {
        index.upsert(t.id, t.cache);
        if (isNew) {
          indexedTargets.incrementAndGet();
        }
      }
    }
    targets.encoded(usable, model.version);
    logFlattened(key, index, flattened, "a new target's vector");
  }

  private boolean positivesOnly() {
    return settings.negativesPool() == NegativesPool.POSITIVES;
  }

  /** Whether an unnamed target is in a {@code positives} pool at {@code version}. */
  private boolean unnamedAdmitted(String id, long version) {
    return settings.unnamedShare().admits(id, version);
  }

  /**
   * After a model update moved the key's tree in place (a map), the unnamed targets of the new
   * version's share replace the previous version's ({@code negatives.unnamed.share}); an exact
   * update builds its tree with the new share instead ({@link #pool}).
   */
  private void rotateUnnamed(int key, ShardIndex index, long version) throws Exception {
    if (!positivesOnly() || settings.unnamedShare().share() <= 0) {
      return;
    }
    long start = System.nanoTime();
    Predicate<String> inPool = pool(version);
    List<String> joining = new ArrayList<>();
    int left = 0;
    for (String id : targets.ids()) {
      if (inPool.test(id)) {
        if (!index.contains(id)) {
          joining.add(id);
        }
      } else if (index.delete(id)) {
        indexedTargets.decrementAndGet();
        left++;
      }
    }
    int joined = 0;
    long flattened = index.framesFlattened();
    for (TargetFeatures t : targets.shippedWithCache(joining, version)) {
      if (t.cache != null) { // not encoded yet: it joins when it is
        index.upsert(t.id, t.cache);
        indexedTargets.incrementAndGet();
        joined++;
      }
    }
    logFlattened(key, index, flattened, "an unnamed target's vector");
    LOG.info(
        "shard key {}: model update {}: the pool swapped shares: {} unnamed targets left, {} joined, in {} ms",
        key,
        version,
        left,
        joined,
        (System.nanoTime() - start) / 1_000_000);
  }

  /**
   * Under {@code negatives.pool=positives}, the batch's positives this key owns are named ({@link
   * NamedPositives}) and those it stores join its index before the batch is answered: the pool is
   * every target a pair has named so far. A named target that arrives later joins when it is
   * encoded.
   */
  private void admitPositives(int key, ShardIndex index, QueryBatch batch) throws Exception {
    if (!positivesOnly()) {
      return;
    }
    int shard = shardNumber(key);
    List<String> notIndexed = new ArrayList<>();
    for (String id : batch.targetIds) {
      // Only the owner shard stores a target (DecodeTargets routes by the same hash).
      if (ShardKeys.shardOf(id, shardKeys.length) == shard && !index.contains(id)) {
        notIndexed.add(id);
      }
    }
    List<String> first = notIndexed.isEmpty() ? List.of() : named.name(notIndexed);
    if (first.isEmpty()) {
      return;
    }
    long flattened = index.framesFlattened();
    for (TargetFeatures t : targets.shippedWithCache(first, model.version)) {
      if (t.cache != null) { // not encoded yet: it joins when it is
        index.upsert(t.id, t.cache);
        indexedTargets.incrementAndGet();
      }
    }
    logFlattened(key, index, flattened, "a newly named positive's vector");
  }

  /**
   * One group of the key's exact re-encode, if one is due ({@link ExactRefinement}), after a batch
   * was answered (not the first at the update's version): the state takes each exact vector at
   * once, the index holds it aside ({@link ShardIndex#stage}), and the tree keeps serving the
   * update's map until the last group is in; then a tree is built from the exact vectors. Inserting
   * each vector as it came cost a delete and an insert per target, left most nodes hollow, and on
   * the landmarks' cycle (a singular map) the first vector beyond the frame's reach had the whole
   * tree moved and repaired: seconds on the first batch of the update.
   */
  private void refine(int key, ShardIndex index) throws Exception {
    if (!refinement.pending() || passStartsAfterNextBatch.remove(key)) {
      return;
    }
    ExactRefinement.Step step =
        refinement.step(
            key, targets, settings.reencodeExactPerBatch(), g -> encode(model, g), model.version);
    for (TargetFeatures t : step.reencoded()) {
      if (index.contains(t.id)) {
        index.stage(t.id, t.cache);
      }
    }
    if (!step.finished()) {
      return;
    }
    long start = System.nanoTime();
    int staged = index.stagedCount();
    ShardIndex exact = index.rebuilt(settings.seed() ^ key);
    dropIndex(key, index);
    putIndex(key, exact);
    LOG.info(
        "shard key {}: every target exact at model version {}: {} re-encoded over {} batches, {}"
            + " ms in all; the tree built from {} exact vectors of {} in {} ms",
        key,
        model.version,
        step.reencodedSoFar(),
        step.stepsSoFar(),
        step.nanosSoFar() / 1_000_000,
        staged,
        exact.size(),
        (System.nanoTime() - start) / 1_000_000);
  }

  /** Forgets the key's heap index: it is rebuilt from the key's state on next use. */
  private void dropIndex(int key, ShardIndex index) {
    indexes.remove(key);
    indexedTargets.addAndGet(-index.size());
  }

  private void putIndex(int key, ShardIndex index) {
    indexes.put(key, index);
    indexedTargets.addAndGet(index.size());
  }

  /**
   * Which of the key's stored targets its index holds at model version {@code version} ({@code
   * negatives.pool}, {@code negatives.unnamed.share}).
   */
  private Predicate<String> pool(long version) throws Exception {
    if (!positivesOnly()) {
      return id -> true;
    }
    Set<String> namedIds = named.all();
    return id -> namedIds.contains(id) || unnamedAdmitted(id, version);
  }

  /** Says when adding {@code what} made the index apply its frame to every vector. */
  private static void logFlattened(int key, ShardIndex index, long before, String what) {
    if (index.framesFlattened() > before) {
      LOG.info(
          "shard key {}: {} lies beyond the tree's frame: the tree's vectors were moved to current"
              + " coordinates and the tree repaired",
          key,
          what);
    }
  }

  /**
   * Sets the cache vector of each target at {@code with}'s version, in groups of {@value
   * #ENCODE_BATCH}.
   */
  private static List<TargetFeatures> encode(ShardModel with, List<TargetFeatures> group) {
    for (int from = 0; from < group.size(); from += ENCODE_BATCH) {
      List<TargetFeatures> part = group.subList(from, Math.min(group.size(), from + ENCODE_BATCH));
      float[][] caches = with.targetCaches(part.stream().map(Features::of).toList());
      for (int i = 0; i < part.size(); i++) {
        part.get(i).cache = caches[i];
        part.get(i).version = with.version;
      }
    }
    return group;
  }

  private ShardReply answer(int key, ShardIndex index, QueryBatch batch) throws Exception {
    long start = System.nanoTime();
    int shard = shardNumber(key);
    SplittableRandom random =
        new SplittableRandom(
            settings.seed() * 0x9E3779B97F4A7C15L + batch.batchId * 1_000_003L + shard);
    List<Features> queries = new ArrayList<>(batch.size());
    for (String text : batch.queryTexts) {
      queries.add(model.encoder.featurizeQuery(text));
    }
    HardNegativeMiner.Mined mined = HardNegativeMiner.Mined.none();
    long version = model.version;
    // Under positives the index holds the pool only; the state knows every encoded target.
    long storedTargets = positivesOnly() ? targets.encodedCount(version) : index.size();
    HardNegativeMiner.Shard data =
        new HardNegativeMiner.Shard(
            key, index, id -> targets.shipped(id, 0f, version), model, storedTargets);
    FidelityProbe.Probed probed = null;
    if (miner != null && index.size() > 0 && settings.hardNegativesPerStep() > 0) {
      mined = miner.mine(data, queries, batch, random);
      if (fidelity != null) {
        probed = fidelity.probe(data, queries, batch, mined);
      }
    }
    int uniformDraws = settings.uniformDrawsPerStep();
    List<String> drawn = new ArrayList<>(uniformDraws);
    for (int i = 0; i < uniformDraws && index.size() > 0; i++) {
      drawn.add(index.uniform(random));
    }
    // With their cache vectors: the trainer fits the next map on such samples.
    List<TargetFeatures> uniform = targets.shippedWithCache(drawn, version);
    List<Integer> positiveQuery = new ArrayList<>();
    List<TargetFeatures> positives = new ArrayList<>();
    for (int q = 0; q < batch.size(); q++) {
      if (index.contains(batch.targetIds[q])) {
        positiveQuery.add(q);
        positives.add(targets.shipped(batch.targetIds[q], 0f, version));
      }
    }
    ShardReply reply = new ShardReply();
    reply.batchId = batch.batchId;
    // The merge takes the batch from shard 0's reply; the others need not ship it.
    reply.batch = shard == 0 ? batch : null;
    reply.shard = shard;
    reply.shardSize = index.size();
    reply.storedTargets = storedTargets;
    reply.modelVersion = model.version;
    reply.modelStep = model.step;
    reply.sampledQuery = mined.queryOf().stream().mapToInt(Integer::intValue).toArray();
    reply.sampled = mined.targets().toArray(new TargetFeatures[0]);
    reply.sampledLogProbabilities = new float[reply.sampled.length];
    for (int i = 0; i < reply.sampled.length; i++) {
      reply.sampledLogProbabilities[i] = mined.logProbabilities().get(i);
    }
    reply.uniform = uniform.toArray(new TargetFeatures[0]);
    reply.positiveQuery = positiveQuery.stream().mapToInt(Integer::intValue).toArray();
    reply.positives = positives.toArray(new TargetFeatures[0]);
    reply.logMass = mined.logMass();
    reply.probes = probed == null ? null : probed.parts();
    reply.sampledExactLogits = probed == null ? null : probed.offeredLogits();
    reply.proposals = mined.proposals();
    reply.accepted = mined.accepted();
    reply.updatesIgnored = duplicateUpdates.getCount();
    reply.miningFloats = miner == null ? 0 : miner.floats(key);
    reply.samplingMillis = (System.nanoTime() - start) / 1e6;
    lastSamplingMillis = reply.samplingMillis;
    lastBatchAnswered = batch.batchId;
    return reply;
  }

  /** How a shard key moves its cache to a model update's version. */
  enum Migration {
    /** By the update's map (milliseconds). */
    MAP,
    /** By the map at once, then every target re-encoded exactly, a group per batch. */
    MAP_THEN_EXACT,
    /** Every target re-encoded exactly before the next batch, and the tree rebuilt. */
    EXACT
  }

  /**
   * A map moves the cache of one version ({@code map_from}, by default v-1): a shard holding any
   * other (it missed an update, or took one of a branch a restore discarded) has no map that leads
   * to the update and re-encodes exactly at once. An update the trainer marked exact (its map was
   * unfaithful, or the landmarks are new) is applied by its map first and re-encoded exactly group
   * by group, unless {@code reencode.exact.per.batch} is 0.
   */
  static Migration migrationOf(ModelUpdate update, long currentVersion, int exactPerBatch) {
    long from = update.getMapFrom() != null ? update.getMapFrom() : update.getVersion() - 1;
    if (from != currentVersion) {
      return Migration.EXACT;
    }
    if (!update.getReencodeExactly()) {
      return Migration.MAP;
    }
    return exactPerBatch > 0 ? Migration.MAP_THEN_EXACT : Migration.EXACT;
  }

  /**
   * A model update, on its own input: an update is larger than a network buffer, and on the same
   * input as the backlog of query batches it would wait for buffers those batches hold.
   */
  @Override
  public void processElement2(ShardInput in, Context ctx, Collector<ShardReply> out)
      throws Exception {
    if (in.kind != ShardInput.MODEL_UPDATE) {
      throw new IllegalStateException("the model-updates input got shard input kind " + in.kind);
    }
    apply(in.update, ctx.getCurrentKey(), ctx);
  }

  /**
   * Moves key {@code key} to {@code update}'s version: its cache by the update's map (or exact
   * re-encoding) and its tree repaired, through {@link CacheMigration}.
   */
  private void apply(ModelUpdate update, int key, Context ctx) throws Exception {
    ModelUpdate current = currentUpdate.value();
    long currentVersion = current == null ? 0 : current.getVersion();
    if (update.getVersion() <= currentVersion) {
      duplicateUpdates.inc();
      LOG.info(
          "shard key {}: ignoring model update {}: it already holds version {}",
          key,
          update.getVersion(),
          currentVersion);
      return;
    }
    // The trainer stamps an update as it emits it (one machine's clock in the benchmarks).
    long receivedMs = System.currentTimeMillis() - update.getCreatedMs();
    ShardModel next;
    long loading = System.nanoTime();
    try {
      next = loaded(update);
    } catch (RuntimeException e) {
      // The key stays at its version; a later update is applied exactly.
      ctx.output(
          DeadLetters.TAG,
          DeadLetters.ofDecoded(
              settings.modelUpdatesTopic(),
              "model-" + update.getVersion() + "-key-" + key,
              "cannot load model update " + update.getVersion() + ": " + e.getMessage(),
              STAGE));
      return;
    }
    long loadMillis = (System.nanoTime() - loading) / 1_000_000;
    ShardIndex index = indexes.get(key);
    Migration migration = migrationOf(update, currentVersion, settings.reencodeExactPerBatch());
    CacheMap map =
        migration == Migration.EXACT
            ? null
            : new CacheMap(
                update.getCacheMap().getRows(), Matrices.values(update.getCacheMap(), "cache map"));
    long start = System.nanoTime();
    // An exact re-encode rewrites every vector: the tree is built again from the vectors as they
    // are written, in the state's order (the tree a rebuild from the state would give), instead
    // of reading the whole key's state back at the next batch.
    // (Only when there is a tree to replace: without one, the next batch builds it from the state
    // and collects the targets still waiting to be encoded.)
    boolean rebuild = map == null && index != null;
    Predicate<String> indexed = rebuild ? pool(update.getVersion()) : id -> false;
    List<String> exactIds = new ArrayList<>();
    List<float[]> exactVectors = new ArrayList<>();
    CacheMigration.Outcome outcome =
        CacheMigration.apply(
            targets,
            index,
            currentVersion,
            update.getVersion(),
            map,
            group -> {
              encode(next, group);
              for (TargetFeatures t : group) {
                if (indexed.test(t.id)) {
                  exactIds.add(t.id);
                  exactVectors.add(t.cache.clone());
                }
              }
            },
            settings.seed() ^ update.getVersion());
    if (migration == Migration.MAP_THEN_EXACT) {
      refinement.start(key, update.getVersion());
      passStartsAfterNextBatch.add(key);
      LOG.info(
          "shard key {}: model update {} is exact: applied its map first, every target now"
              + " re-encoded exactly, {} per batch",
          key,
          update.getVersion(),
          settings.reencodeExactPerBatch());
    }
    if (map == null) {
      refinement.cancel(key);
      passStartsAfterNextBatch.remove(key);
      if (rebuild) {
        dropIndex(key, index);
        putIndex(
            key,
            ShardIndex.build(
                settings.landmarks(),
                settings.treeBase(),
                exactIds,
                exactVectors,
                settings.seed() ^ key));
      }
    }
    long millis = (System.nanoTime() - start) / 1_000_000;
    if (map == null) {
      LOG.info(
          "shard key {}: re-encoded {} targets exactly for model update {} after batch {} in {} ms"
              + " (received {} ms after it was made, its snapshot loaded in {} ms){}",
          key,
          outcome.targetsMoved(),
          update.getVersion(),
          lastBatchAnswered,
          millis,
          receivedMs,
          loadMillis,
          index != null ? ", the tree built from the new vectors included" : "");
    } else if (outcome.index() != null && outcome.index().byFrame()) {
      LOG.info(
          "shard key {}: applied model update {} after batch {} in {} ms (received {} ms after it"
              + " was made, its snapshot loaded in {} ms): {} targets, by the tree's frame"
              + " (distortion {})",
          key,
          update.getVersion(),
          lastBatchAnswered,
          millis,
          receivedMs,
          loadMillis,
          index.size(),
          String.format("%.2f", outcome.index().distortion()));
    } else if (outcome.index() != null) {
      TreeRepair.Report repair = outcome.index().repair();
      targetsRepaired.inc(repair.targetsMoved());
      LOG.info(
          "shard key {}: applied model update {} after batch {} in {} ms (received {} ms after it"
              + " was made, its snapshot loaded in {} ms): {} targets, frame distortion {} past {}:"
              + " vectors moved, {} subtrees rebuilt, {} targets re-inserted",
          key,
          update.getVersion(),
          lastBatchAnswered,
          millis,
          receivedMs,
          loadMillis,
          repair.targets(),
          String.format("%.2f", outcome.index().distortion()),
          TreeFrame.MAX_DISTORTION,
          repair.subtreesRebuilt(),
          repair.targetsMoved());
    }
    if (map != null && index != null) {
      rotateUnnamed(key, index, update.getVersion());
    }
    currentUpdate.update(update);
    model = next;
    updatesApplied.inc();
  }

  /** Sets {@link #model} to the version the current key holds. */
  private void ensureModel(ModelUpdate current) {
    model = current == null ? loaded(0, () -> ShardModel.initial(settings)) : loaded(current);
  }

  private ShardModel loaded(ModelUpdate update) {
    return loaded(update.getVersion(), () -> ShardModel.of(update));
  }

  /**
   * The subtask's model of {@code version}, loaded once; the oldest loaded version is closed when
   * more than {@value #MODELS_KEPT} are (a key still at it would load it again).
   */
  private ShardModel loaded(long version, java.util.function.Supplier<ShardModel> load) {
    ShardModel m = models.get(version);
    if (m == null) {
      m = load.get();
      models.put(version, m);
      while (models.size() > MODELS_KEPT) {
        models.pollFirstEntry().getValue().close();
      }
    }
    return m;
  }

  /** The heap index of the current key, rebuilt from the key's state when missing. */
  private ShardIndex index(int key) throws Exception {
    ShardIndex index = indexes.get(key);
    if (index == null) {
      // Stored but not encoded before a restore: encoded (and dead-lettered if unusable) like any
      // new target.
      LinkedHashSet<String> pending = unencoded.computeIfAbsent(key, k -> new LinkedHashSet<>());
      long start = System.nanoTime();
      ShardTargets.Indexed state =
          targets.indexedVectors(model.version, pool(model.version), pending::add);
      long read = System.nanoTime();
      long seed = settings.seed() ^ key;
      byte[] shape = shapes.take(key);
      String how = "in bulk";
      index = null;
      if (shape != null) {
        try {
          ShardIndex.Restored restored =
              ShardIndex.restore(
                  settings.landmarks(),
                  settings.treeBase(),
                  state.ids(),
                  state.vectors(),
                  seed,
                  shape);
          index = restored.index();
          treesFromShape++;
          how =
              String.format(
                  "from its checkpointed shape (%d targets placed, %d inserted, %d moved by the"
                      + " repair)",
                  restored.placed(), restored.inserted(), restored.repair().targetsMoved());
        } catch (IllegalArgumentException e) {
          LOG.warn(
              "shard key {}: its checkpointed tree shape is unusable, building in bulk", key, e);
        }
      }
      if (index == null) {
        index =
            ShardIndex.build(
                settings.landmarks(), settings.treeBase(), state.ids(), state.vectors(), seed);
      }
      putIndex(key, index);
      // The tree is heap-only: rebuilt from the state after a restore (from the shape saved with
      // the checkpoint, or in bulk); an exact re-encode builds it from the vectors it writes (at
      // once, or at the end of a gradual pass). Its cost is what a restored shard waits for before
      // it answers its first batch.
      if (index.size() > 0) {
        double millis = (System.nanoTime() - start) / 1e6;
        indexBuildMillis += millis;
        LOG.info(
            "shard key {}: SG tree built from state {}: {} targets in {} ms ({} ms reading the"
                + " state)",
            key,
            how,
            index.size(),
            Math.round(millis),
            (read - start) / 1_000_000);
      }
    }
    return index;
  }

  private int shardNumber(int key) {
    for (int s = 0; s < shardKeys.length; s++) {
      if (shardKeys[s] == key) {
        return s;
      }
    }
    throw new IllegalStateException("key " + key + " is no shard's key");
  }

  @Override
  public void close() {
    if (models != null) {
      models.values().forEach(ShardModel::close);
      models.clear();
      model = null;
    }
    if (miner != null) {
      miner.close();
    }
    if (fidelity != null) {
      fidelity.close();
    }
  }
}
