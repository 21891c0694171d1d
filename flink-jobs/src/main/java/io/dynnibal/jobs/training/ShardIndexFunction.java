package io.dynnibal.jobs.training;

import io.dynnibal.index.nystrom.CacheMap;
import io.dynnibal.index.sampling.FindClustering;
import io.dynnibal.index.sampling.MetropolisHastingsSampler;
import io.dynnibal.index.sampling.NegativeSampler;
import io.dynnibal.index.sampling.RejectionSampler;
import io.dynnibal.index.sampling.Samples;
import io.dynnibal.index.sgtree.TreeRepair;
import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.FullDimensionPool;
import io.dynnibal.schemas.AvroTrust;
import io.dynnibal.schemas.ModelUpdate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.BroadcastState;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.formats.avro.typeutils.AvroTypeInfo;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.co.KeyedBroadcastProcessFunction;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shard of the index per key: targets join and leave at any time, query batches get negatives,
 * model updates move the whole cache and repair the tree.
 *
 * <p>State: {@code targets} (RocksDB map state, id -> features + cache vector) is the truth; the SG
 * tree of each shard is a heap cache of it ({@link ShardIndex}), rebuilt from it on the first use
 * after a start or restore. The current model update is broadcast state. The encoder and projection
 * of the current version are loaded from it.
 *
 * <p>Targets and queries are encoded here, with the version the shard holds, so a shard's cache and
 * its queries are always of one version and each reply says which. New and changed targets are
 * stored at once (features, no cache vector yet) and encoded in groups of {@value #ENCODE_BATCH}:
 * before the shard answers a batch, when a group is full, or {@value #ENCODE_DELAY_MS} ms after the
 * first one waiting. One forward pass per group instead of per target is what makes indexing fast;
 * a restore encodes whatever was still waiting in its state.
 *
 * <p>Rules for updates: one whose version is not above the current one is a duplicate and ignored;
 * one that skips versions cannot be applied as a map (maps go from version v-1 to v), so every
 * target is re-encoded exactly from its stored features instead.
 */
final class ShardIndexFunction
    extends KeyedBroadcastProcessFunction<Integer, ShardInput, ModelUpdate, ShardReply> {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(ShardIndexFunction.class);
  static final String STAGE = "shard-index";
  static final MapStateDescriptor<String, ModelUpdate> MODEL =
      new MapStateDescriptor<>("model", Types.STRING, new AvroTypeInfo<>(ModelUpdate.class));
  private static final String CURRENT = "current";
  static final int ENCODE_BATCH = 512;
  static final long ENCODE_DELAY_MS = 200;

  private final TrainingJobConfig config;
  private final int[] shardKeys;
  private final MapStateDescriptor<String, TargetFeatures> targetsDescriptor =
      new MapStateDescriptor<>("targets", Types.STRING, TypeInformation.of(TargetFeatures.class));

  private transient MapState<String, TargetFeatures> targets;
  private transient Map<Integer, ShardIndex> indexes;
  private transient ShardModel model;
  private transient NegativeSampler treeSampler;
  private transient Map<Integer, ShardPool> pools;

  /**
   * Per shard key, targets stored without a cache vector yet (waiting to be encoded as a group).
   */
  private transient Map<Integer, java.util.LinkedHashSet<String>> unencoded;

  private transient AtomicLong indexedTargets;
  private transient Counter updatesApplied;
  private transient Counter duplicateUpdates;
  private transient Counter targetsRepaired;
  private transient Counter samplingGaveUp;
  private transient volatile double lastSamplingMillis;

  ShardIndexFunction(TrainingJobConfig config, int[] shardKeys) {
    this.config = config;
    this.shardKeys = shardKeys;
  }

  @Override
  public void open(OpenContext context) {
    AvroTrust.install();
    targets = getRuntimeContext().getMapState(targetsDescriptor);
    indexes = new HashMap<>();
    treeSampler = treeSampler(config);
    pools = new HashMap<>();
    unencoded = new HashMap<>();
    indexedTargets = new AtomicLong();
    var metrics = getRuntimeContext().getMetricGroup();
    metrics.gauge("indexTargets", () -> indexedTargets.get());
    metrics.gauge("samplingMillis", () -> lastSamplingMillis);
    updatesApplied = metrics.counter("modelUpdatesApplied");
    duplicateUpdates = metrics.counter("modelUpdatesIgnored");
    targetsRepaired = metrics.counter("repairTargetsMoved");
    samplingGaveUp = metrics.counter("samplingGaveUp");
  }

  /** The SG-tree sampler of the DyNNIBAL samplers; null for the others. */
  static NegativeSampler treeSampler(TrainingJobConfig config) {
    FindClustering.Options clustering =
        new FindClustering.Options(config.scoreScale, 1e6, 0.3, config.maxClusters);
    return switch (config.sampler()) {
      case DYNNIBAL_MH ->
          new MetropolisHastingsSampler(
              MetropolisHastingsSampler.Options.practical(
                  clustering, config.candidatesPerNegative));
      // Exact sampling restarts about gamma times per sample: it starts from a fine partition
      // (small gamma, a large
      // cluster budget), not the MH proposal's coarse one.
      case DYNNIBAL_REJECTION ->
          new RejectionSampler(
              new FindClustering.Options(
                  config.scoreScale, config.rejectionGamma, 0.3, config.rejectionMaxClusters),
              // Restarts beyond ~100 gamma mean the partition is far coarser than asked: give up
              // early, not at 100k.
              (long) Math.max(1_000, 100 * config.rejectionGamma));
      default -> null;
    };
  }

  @Override
  public void processElement(ShardInput in, ReadOnlyContext ctx, Collector<ShardReply> out)
      throws Exception {
    ensureModel(ctx.getBroadcastState(MODEL).get(CURRENT));
    int key = ctx.getCurrentKey();
    ShardIndex index = index(key);
    switch (in.kind) {
      case ShardInput.UPSERT -> {
        TargetFeatures target =
            new TargetFeatures(in.targetId, model.encoder.featurize(in.text), null);
        target.version = model.version;
        targets.put(in.targetId, target);
        java.util.LinkedHashSet<String> waiting =
            unencoded.computeIfAbsent(key, k -> new java.util.LinkedHashSet<>());
        if (waiting.isEmpty()) {
          ctx.timerService()
              .registerProcessingTimeTimer(
                  ctx.timerService().currentProcessingTime() + ENCODE_DELAY_MS);
        }
        waiting.add(in.targetId);
        if (waiting.size() >= ENCODE_BATCH) {
          encodeWaiting(key, index, ctx);
        }
      }
      case ShardInput.DELETE -> {
        targets.remove(in.targetId);
        unencoded.getOrDefault(key, new java.util.LinkedHashSet<>()).remove(in.targetId);
        if (index.delete(in.targetId)) {
          indexedTargets.decrementAndGet();
        }
      }
      case ShardInput.QUERIES -> {
        encodeWaiting(key, index, ctx);
        out.collect(answer(key, index, in.batch));
      }
      default -> throw new IllegalStateException("unknown shard input kind " + in.kind);
    }
  }

  @Override
  public void onTimer(long timestamp, OnTimerContext ctx, Collector<ShardReply> out)
      throws Exception {
    ensureModel(ctx.getBroadcastState(MODEL).get(CURRENT));
    int key = ctx.getCurrentKey();
    encodeWaiting(key, index(key), ctx);
  }

  /**
   * Encodes the key's waiting targets with the current model in one pass, then indexes them. A
   * target that encodes to a non-finite vector leaves the shard, with a dead letter.
   */
  private void encodeWaiting(int key, ShardIndex index, ReadOnlyContext ctx) throws Exception {
    java.util.LinkedHashSet<String> waiting = unencoded.get(key);
    if (waiting == null || waiting.isEmpty()) {
      return;
    }
    List<TargetFeatures> group = new ArrayList<>(waiting.size());
    for (String id : waiting) {
      TargetFeatures t = targets.get(id);
      if (t != null && t.cache == null) {
        group.add(t);
      }
    }
    waiting.clear();
    for (TargetFeatures t : encode(model, group)) {
      if (!finite(t.cache)) {
        targets.remove(t.id);
        if (index.delete(t.id)) {
          indexedTargets.decrementAndGet();
        }
        ctx.output(
            DeadLetters.TAG,
            DeadLetters.ofDecoded(
                config.targetsTopic(),
                t.id,
                "target "
                    + t.id
                    + " encodes to a non-finite vector at model version "
                    + model.version
                    + "; it is not in the index",
                STAGE));
        continue;
      }
      targets.put(t.id, t);
      boolean isNew = !index.contains(t.id);
      index.upsert(t.id, t.cache);
      if (isNew) {
        indexedTargets.incrementAndGet();
      }
    }
  }

  /**
   * Sets the cache vector of each target at {@code with}'s version, in groups of {@value
   * #ENCODE_BATCH}.
   */
  private static List<TargetFeatures> encode(ShardModel with, List<TargetFeatures> group) {
    for (int from = 0; from < group.size(); from += ENCODE_BATCH) {
      List<TargetFeatures> part = group.subList(from, Math.min(group.size(), from + ENCODE_BATCH));
      float[][] caches = with.targetCaches(part.stream().map(TargetFeatures::features).toList());
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
            config.seed * 0x9E3779B97F4A7C15L + batch.batchId * 1_000_003L + shard);
    List<Features> queries = new ArrayList<>(batch.size());
    for (String text : batch.queryTexts) {
      queries.add(model.encoder.featurize(text));
    }
    List<Integer> sampledQuery = new ArrayList<>();
    List<TargetFeatures> sampled = new ArrayList<>();
    long[] chain = new long[2]; // MH proposals, accepted
    Sampler kind = config.sampler();
    if (index.size() > 0 && kind.hardNegatives(config) > 0) {
      switch (kind.mining) {
        case SHARD_TREE -> mineTree(index, queries, batch, random, chain, sampledQuery, sampled);
        case SHARD_POOL -> minePool(key, index, queries, batch, sampledQuery, sampled);
        default -> {} // the trainer mines (negative cache) or nobody does
      }
    }
    List<TargetFeatures> uniform = new ArrayList<>();
    for (int i = 0; i < kind.uniformDraws(config) && index.size() > 0; i++) {
      uniform.add(targets.get(index.uniform(random)));
    }
    List<Integer> positiveQuery = new ArrayList<>();
    List<TargetFeatures> positives = new ArrayList<>();
    for (int q = 0; q < batch.size(); q++) {
      if (index.contains(batch.targetIds[q])) {
        positiveQuery.add(q);
        positives.add(targets.get(batch.targetIds[q]).withoutCache(0f));
      }
    }
    ShardReply reply = new ShardReply();
    reply.batchId = batch.batchId;
    reply.batch =
        shard == 0
            ? batch
            : null; // the merge takes the batch from shard 0's reply; others need not ship it
    reply.shard = shard;
    reply.shardSize = index.size();
    reply.modelVersion = model.version;
    reply.modelStep = model.step;
    reply.sampledQuery = sampledQuery.stream().mapToInt(Integer::intValue).toArray();
    reply.sampled = sampled.toArray(new TargetFeatures[0]);
    reply.uniform = uniform.toArray(new TargetFeatures[0]);
    reply.positiveQuery = positiveQuery.stream().mapToInt(Integer::intValue).toArray();
    reply.positives = positives.toArray(new TargetFeatures[0]);
    reply.proposals = chain[0];
    reply.updatesIgnored = duplicateUpdates.getCount();
    reply.accepted = chain[1];
    ShardPool pool = pools.get(key);
    reply.miningFloats = pool == null ? 0 : pool.floats();
    reply.samplingMillis = (System.nanoTime() - start) / 1e6;
    lastSamplingMillis = reply.samplingMillis;
    return reply;
  }

  /**
   * DyNNIBAL: each query's negatives from the SG tree over Nyström vectors (queries projected into
   * the cache space). A query's own positive is dropped: it is masked in the loss anyway, so it
   * would only waste a slot.
   */
  private void mineTree(
      ShardIndex index,
      List<Features> queries,
      QueryBatch batch,
      SplittableRandom random,
      long[] chain,
      List<Integer> sampledQuery,
      List<TargetFeatures> sampled)
      throws Exception {
    float[][] z = model.queryCaches(queries);
    for (int q = 0; q < z.length; q++) {
      Samples samples;
      try {
        samples = index.sample(treeSampler, z[q], config.negativesPerQuery, random);
      } catch (IllegalStateException e) {
        if (config.sampler() != Sampler.DYNNIBAL_REJECTION) {
          throw e; // a bug, not a sampler's documented limit
        }
        // Rejection sampling gave up (a partition too coarse for this query): this query gets no
        // hard negative
        // from this shard; the batch still trains. Counted, so a user sees when to refine the
        // partition.
        samplingGaveUp.inc();
        if (samplingGaveUp.getCount() == 1 || samplingGaveUp.getCount() % 1000 == 0) {
          LOG.warn(
              "{} (query {} of batch {}; {} times so far)",
              e.getMessage(),
              q,
              batch.batchId,
              samplingGaveUp.getCount());
        }
        continue;
      }
      chain[0] += samples.proposals();
      chain[1] += samples.accepted();
      for (int i = 0; i < samples.size(); i++) {
        String id = index.idOf(samples.targets()[i]);
        if (!id.equals(batch.targetIds[q])) {
          sampledQuery.add(q);
          sampled.add(targets.get(id).withoutCache((float) samples.logits()[i]));
        }
      }
    }
  }

  /**
   * Exhaustive and stochastic negative mining: each query's best pool members at full dimension,
   * own positive dropped.
   */
  private void minePool(
      int key,
      ShardIndex index,
      List<Features> queries,
      QueryBatch batch,
      List<Integer> sampledQuery,
      List<TargetFeatures> sampled)
      throws Exception {
    ShardPool pool = pools.computeIfAbsent(key, k -> ShardPool.of(config));
    FullDimensionPool members =
        pool.forBatch(batch.batchId, model, index, targets, config.seed ^ key);
    FullDimensionPool.TopK top =
        members.topK(model.encoder.encodeQueries(queries), config.negativesPerQuery + 1);
    for (int q = 0; q < queries.size(); q++) {
      int taken = 0;
      for (int r = 0; r < top.members()[q].length && taken < config.negativesPerQuery; r++) {
        String id = members.id(top.members()[q][r]);
        if (!id.equals(batch.targetIds[q]) && index.contains(id)) {
          sampledQuery.add(q);
          sampled.add(targets.get(id).withoutCache(config.scoreScale * top.scores()[q][r]));
          taken++;
        }
      }
    }
  }

  @Override
  public void processBroadcastElement(ModelUpdate update, Context ctx, Collector<ShardReply> out)
      throws Exception {
    BroadcastState<String, ModelUpdate> state = ctx.getBroadcastState(MODEL);
    ModelUpdate current = state.get(CURRENT);
    long currentVersion = current == null ? 0 : current.getVersion();
    if (update.getVersion() <= currentVersion) {
      duplicateUpdates.inc();
      LOG.info(
          "ignoring model update {}: this shard already holds version {}",
          update.getVersion(),
          currentVersion);
      return;
    }
    ShardModel next;
    try {
      next = ShardModel.of(update);
    } catch (RuntimeException e) {
      // Every subtask reports it; the shards stay at their version and a later update is applied
      // exactly.
      ctx.output(
          DeadLetters.TAG,
          DeadLetters.ofDecoded(
              config.modelUpdatesTopic(),
              "model-" + update.getVersion(),
              "cannot load model update " + update.getVersion() + ": " + e.getMessage(),
              STAGE));
      return;
    }
    boolean exact = update.getVersion() != currentVersion + 1;
    CacheMap map =
        new CacheMap(
            update.getCacheMap().getRows(), Matrices.values(update.getCacheMap(), "cache map"));
    float[] scratch = new float[map.dimension()];
    long seed = config.seed ^ update.getVersion();
    ctx.applyToKeyedState(
        targetsDescriptor,
        (key, shardTargets) -> {
          List<TargetFeatures> moved = new ArrayList<>();
          for (Map.Entry<String, TargetFeatures> entry : shardTargets.entries()) {
            TargetFeatures t = entry.getValue();
            if (t.cache == null) {
              continue; // waiting to be encoded: it will be, with the model current then
            }
            if (!exact) {
              map.applyInPlace(t.cache, scratch);
              t.version = update.getVersion();
            }
            moved.add(t);
          }
          if (exact) {
            encode(next, moved);
          }
          for (TargetFeatures t : moved) {
            shardTargets.put(t.id, t);
          }
          ShardIndex index = indexes.get(key);
          if (index != null) {
            if (exact) {
              indexes.remove(key); // rebuilt from the re-encoded state on next use
              indexedTargets.addAndGet(-index.size());
            } else {
              TreeRepair.Report report = index.move(map, seed);
              targetsRepaired.inc(report.targetsMoved());
              LOG.info(
                  "shard key {}: applied model update {}: {} targets, {} subtrees rebuilt, {} targets moved",
                  key,
                  update.getVersion(),
                  report.targets(),
                  report.subtreesRebuilt(),
                  report.targetsMoved());
            }
          }
        });
    state.put(CURRENT, update);
    if (model != null) {
      model.close();
    }
    model = next;
    updatesApplied.inc();
  }

  private static boolean finite(float[] v) {
    for (float x : v) {
      if (!Float.isFinite(x)) {
        return false;
      }
    }
    return true;
  }

  private void ensureModel(ModelUpdate current) {
    long wanted = current == null ? 0 : current.getVersion();
    if (model != null && model.version == wanted) {
      return;
    }
    if (model != null) {
      model.close();
    }
    model = current == null ? ShardModel.initial(config) : ShardModel.of(current);
  }

  /**
   * The heap index of the current key, rebuilt from the key's state when missing (first use,
   * restore).
   */
  private ShardIndex index(int key) throws Exception {
    ShardIndex index = indexes.get(key);
    if (index == null) {
      List<String> ids = new ArrayList<>();
      List<float[]> vectors = new ArrayList<>();
      List<TargetFeatures> waiting = new ArrayList<>();
      for (Map.Entry<String, TargetFeatures> entry : targets.entries()) {
        if (entry.getValue().cache == null) {
          waiting.add(entry.getValue());
          continue;
        }
        ids.add(entry.getKey());
        vectors.add(entry.getValue().cache.clone()); // the tree keeps and moves its own copy
      }
      // Stored but not encoded before the restore: encoded (and dead-lettered if unusable) like any
      // new target.
      java.util.LinkedHashSet<String> pending =
          unencoded.computeIfAbsent(key, k -> new java.util.LinkedHashSet<>());
      waiting.forEach(t -> pending.add(t.id));
      index = ShardIndex.build(config.landmarks, config.treeBase, ids, vectors, config.seed ^ key);
      indexes.put(key, index);
      indexedTargets.addAndGet(ids.size());
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
    if (model != null) {
      model.close();
      model = null;
    }
    if (pools != null) {
      pools.values().forEach(ShardPool::close);
    }
  }
}
