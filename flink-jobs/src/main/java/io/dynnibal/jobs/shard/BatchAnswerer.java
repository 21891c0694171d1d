package io.dynnibal.jobs.shard;

import io.dynnibal.model.features.Features;
import io.dynnibal.state.ShardIndex;
import io.dynnibal.state.ShardTargets;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.QueryBatch;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Answers a query batch for one shard key ({@link ShardReply}): the key's hard negatives for each
 * query ({@link HardNegativeMiner}, the paper's FindClustering and sampling over the key's SG tree,
 * or a configured alternative), the fidelity probe's half ({@link FidelityProbe}), uniform draws
 * from the key's index with their cache vectors (the trainer fits the next cache map on them), and
 * the batch's positives the key holds.
 *
 * <p>Queries are encoded with the model of the key's version, the one its cache is at, and the
 * reply says which. Deterministic: the draws come from a random seeded by the job's seed, the batch
 * and the shard.
 */
final class BatchAnswerer implements AutoCloseable {
  private final ShardSettings settings;
  private final ShardTargets targets;
  private final TargetPool pool;
  private final ShardMetrics metrics;

  /** Null when the shards mine nothing. */
  private final HardNegativeMiner miner;

  /** Null when there is no miner or {@code fidelity.probes} is 0. */
  private final FidelityProbe fidelity;

  BatchAnswerer(
      ShardSettings settings, ShardTargets targets, TargetPool pool, ShardMetrics metrics) {
    this.settings = settings;
    this.targets = targets;
    this.pool = pool;
    this.metrics = metrics;
    this.miner = HardNegativeMiner.of(settings, metrics.samplingGaveUp, metrics::mined);
    this.fidelity = miner == null ? null : FidelityProbe.of(settings, miner);
  }

  /** What the key's miner and probe found for a batch. */
  private record Found(HardNegativeMiner.Mined mined, FidelityProbe.Probed probed) {}

  /** The batch's positives the key holds, with the queries (indexes in the batch) they answer. */
  private record Positives(List<Integer> query, List<TargetFeatures> targets) {}

  /**
   * The reply of shard {@code shard} (key {@code key}, tree {@code index}, at {@code model}'s
   * version) to {@code batch}.
   */
  ShardReply answer(int key, int shard, ShardIndex index, ShardModel model, QueryBatch batch)
      throws Exception {
    long start = System.nanoTime();
    SplittableRandom random =
        new SplittableRandom(
            settings.seed() * 0x9E3779B97F4A7C15L + batch.batchId * 1_000_003L + shard);
    List<Features> queries = new ArrayList<>(batch.size());
    for (String text : batch.queryTexts) {
      queries.add(model.encoder.featurizeQuery(text));
    }
    long version = model.version;
    // Under positives the index holds the pool only; the state knows every encoded target.
    long storedTargets = pool.positivesOnly() ? targets.encodedCount(version) : index.size();
    HardNegativeMiner.Shard data =
        new HardNegativeMiner.Shard(
            key,
            index,
            id -> targets.shipped(id, 0f, version),
            targets::text,
            model,
            storedTargets);
    Found found = mine(data, queries, batch, random);
    List<TargetFeatures> uniform = uniform(index, random, version);
    Positives positives = positives(index, batch, version);
    ShardReply reply = reply(key, shard, index, model, batch, storedTargets);
    fill(reply, found, uniform, positives);
    reply.samplingMillis = (System.nanoTime() - start) / 1e6;
    metrics.answered(batch.batchId, reply.samplingMillis);
    return reply;
  }

  private Found mine(
      HardNegativeMiner.Shard data,
      List<Features> queries,
      QueryBatch batch,
      SplittableRandom random)
      throws Exception {
    if (miner == null || data.index().size() == 0 || settings.hardNegativesPerStep() <= 0) {
      return new Found(HardNegativeMiner.Mined.none(), null);
    }
    HardNegativeMiner.Mined mined = miner.mine(data, queries, batch, random);
    return new Found(mined, fidelity == null ? null : fidelity.probe(data, queries, batch, mined));
  }

  /** {@code uniform.draws} draws from the index, with their cache vectors. */
  private List<TargetFeatures> uniform(ShardIndex index, SplittableRandom random, long version)
      throws Exception {
    int uniformDraws = settings.uniformDrawsPerStep();
    List<String> drawn = new ArrayList<>(uniformDraws);
    for (int i = 0; i < uniformDraws && index.size() > 0; i++) {
      drawn.add(index.uniform(random));
    }
    return targets.shippedWithCache(drawn, version);
  }

  private Positives positives(ShardIndex index, QueryBatch batch, long version) throws Exception {
    List<Integer> query = new ArrayList<>();
    List<TargetFeatures> positives = new ArrayList<>();
    for (int q = 0; q < batch.size(); q++) {
      if (index.contains(batch.targetIds[q])) {
        query.add(q);
        positives.add(targets.shipped(batch.targetIds[q], 0f, version));
      }
    }
    return new Positives(query, positives);
  }

  /** The reply's header: which batch, shard, size and version it is of. */
  private ShardReply reply(
      int key, int shard, ShardIndex index, ShardModel model, QueryBatch batch, long stored) {
    ShardReply reply = new ShardReply();
    reply.batchId = batch.batchId;
    // The merge takes the batch from shard 0's reply; the others need not ship it.
    reply.batch = shard == 0 ? batch : null;
    reply.shard = shard;
    reply.shardSize = index.size();
    reply.storedTargets = stored;
    reply.modelVersion = model.version;
    reply.modelStep = model.step;
    reply.updatesIgnored = metrics.duplicateUpdates.getCount();
    reply.miningFloats = miner == null ? 0 : miner.floats(key);
    return reply;
  }

  private static void fill(
      ShardReply reply, Found found, List<TargetFeatures> uniform, Positives positives) {
    HardNegativeMiner.Mined mined = found.mined();
    reply.sampledQuery = mined.queryOf().stream().mapToInt(Integer::intValue).toArray();
    reply.sampled = mined.targets().toArray(new TargetFeatures[0]);
    reply.sampledLogProbabilities = new float[reply.sampled.length];
    for (int i = 0; i < reply.sampled.length; i++) {
      reply.sampledLogProbabilities[i] = mined.logProbabilities().get(i);
    }
    reply.uniform = uniform.toArray(new TargetFeatures[0]);
    reply.positiveQuery = positives.query().stream().mapToInt(Integer::intValue).toArray();
    reply.positives = positives.targets().toArray(new TargetFeatures[0]);
    reply.logMass = mined.logMass();
    reply.probes = found.probed() == null ? null : found.probed().parts();
    reply.sampledExactLogits = found.probed() == null ? null : found.probed().offeredLogits();
    reply.proposals = mined.proposals();
    reply.accepted = mined.accepted();
  }

  /** Says that target {@code id} of key {@code key} was stored with a new text or removed. */
  void targetChanged(int key, String id) {
    if (miner != null) {
      miner.targetChanged(key, id);
    }
  }

  @Override
  public void close() {
    if (miner != null) {
      miner.close();
    }
    if (fidelity != null) {
      fidelity.close();
    }
  }
}
