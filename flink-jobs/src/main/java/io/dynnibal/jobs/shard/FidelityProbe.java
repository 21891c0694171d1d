package io.dynnibal.jobs.shard;

import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.FullDimensionPool;
import io.dynnibal.negatives.SoftmaxFidelity;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.QueryBatch;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The shard's half of the fidelity measurement ({@code fidelity.probes}): for the first few queries
 * of every batch, the exact softmax over all of the shard's targets at the encoder's full dimension
 * ({@link SoftmaxFidelity.Part}), and the exact logit of every negative the shard offered them. The
 * merge combines the shards' halves with the negatives it picked.
 *
 * <p>Exact means the model version the shard holds, the one its miner used: the figures measure
 * what the index loses against brute force over the same model (the Nyström projection, the stale
 * cache, the sampler), not the model's own age, which {@code cache_staleness_steps} reports. It
 * costs a full-dimension encoding of every target per model version, which is why it is off unless
 * asked for; that encoding is spread over the batches after a model update, which are not measured
 * until it is complete.
 */
final class FidelityProbe implements AutoCloseable {
  /**
   * The shard's half for one batch: parts per probe query, exact logits aligned with the offers.
   */
  record Probed(SoftmaxFidelity.Part[] parts, float[] offeredLogits) {}

  /**
   * The fewest targets the probe encodes per batch for a new model version's pool. It encodes a
   * slice per batch, so that no batch waits for a whole re-encoding of the shard (1.3 s with the
   * bag tower, which held every model update's first batch up), and measures no batch until the
   * pool is complete: the slice is sized to complete it within the first half of a version's life
   * ({@code reencode.every} batches). The second half measures the same thing in expectation (the
   * shard's model does not change within a version), so the probe's encoding is spread as thinly as
   * that allows.
   */
  static final int FEWEST_ENCODED_PER_BATCH = 256;

  private final int probes;
  private final int listed;
  private final float beta;
  private final long seed;
  private final int reencodeEvery;

  /** Per shard key, every target at full dimension: the exhaustive miner's own, or the probe's. */
  private final Map<Integer, ShardPool> pools;

  private final boolean ownsPools;

  /**
   * @param probes queries of each batch to measure
   * @param perExample the negatives picked per query: each part lists four times as many targets
   *     (at least 16), enough for the expected mass of softmax draws
   * @param reencodeEvery batches between model versions
   */
  FidelityProbe(int probes, int perExample, float beta, long seed, int reencodeEvery) {
    this(probes, perExample, beta, seed, reencodeEvery, new HashMap<>(), true);
  }

  private FidelityProbe(
      int probes,
      int perExample,
      float beta,
      long seed,
      int reencodeEvery,
      Map<Integer, ShardPool> pools,
      boolean ownsPools) {
    this.pools = pools;
    this.ownsPools = ownsPools;
    this.probes = probes;
    this.listed = Math.max(16, 4 * perExample);
    this.beta = beta;
    this.seed = seed;
    this.reencodeEvery = reencodeEvery;
  }

  /**
   * The probe of the configured sampler, or null when {@code fidelity.probes} is 0. Exhaustive
   * mining already holds every target at the same version: the probe reads its pools instead of
   * encoding them a second time.
   */
  static FidelityProbe of(ShardSettings settings, HardNegativeMiner miner) {
    if (settings.fidelityProbes() == 0) {
      return null;
    }
    boolean share = miner instanceof PoolMiner pool && pool.everyTarget();
    return new FidelityProbe(
        settings.fidelityProbes(),
        settings.minedPerExample(),
        // Against exact mining from the softmax the hard negatives are drawn from.
        (float) settings.samplingScale(),
        settings.seed(),
        settings.reencodeEvery(),
        share ? ((PoolMiner) miner).pools() : new HashMap<>(),
        !share);
  }

  /** The shard's half for {@code batch}, or null while the pool of its version is being built. */
  Probed probe(
      HardNegativeMiner.Shard shard,
      List<Features> queries,
      QueryBatch batch,
      HardNegativeMiner.Mined mined)
      throws Exception {
    int n = Math.min(probes, queries.size());
    FullDimensionPool pool =
        pools
            .computeIfAbsent(shard.key(), k -> ShardPool.everyTarget())
            .forBatchGradually(
                batch.batchId,
                shard.model(),
                shard.index(),
                shard.targets(),
                seed ^ shard.key(),
                encodedPerBatch(shard.index().size()));
    if (pool == null) {
      return null; // this version's pool is still being encoded
    }
    float[][] embedded = shard.model().encoder.encodeQueries(queries.subList(0, n));
    float[] scores = pool.size() == 0 ? new float[0] : pool.scoreAll(embedded);
    List<String> ids = pool.ids();
    SoftmaxFidelity.Part[] parts = new SoftmaxFidelity.Part[n];
    float[][] logits = new float[n][pool.size()];
    for (int q = 0; q < n; q++) {
      for (int i = 0; i < pool.size(); i++) {
        logits[q][i] = beta * scores[q * pool.size() + i];
      }
      parts[q] = SoftmaxFidelity.Part.of(ids, logits[q], pool.memberOf(batch.targetIds[q]), listed);
    }
    float[] offered = new float[mined.targets().size()];
    Arrays.fill(offered, Float.NaN);
    for (int i = 0; i < offered.length; i++) {
      int q = mined.queryOf().get(i);
      TargetFeatures t = mined.targets().get(i);
      int member = q < n ? pool.memberOf(t.id) : -1;
      if (member >= 0) {
        offered[i] = logits[q][member];
      }
    }
    return new Probed(parts, offered);
  }

  /** The pool's slice per batch for a shard of {@code targets}: complete in half a version. */
  int encodedPerBatch(int targets) {
    int batches = Math.max(1, reencodeEvery / 2);
    return Math.max(FEWEST_ENCODED_PER_BATCH, (targets + batches - 1) / batches);
  }

  @Override
  public void close() {
    if (ownsPools) {
      pools.values().forEach(ShardPool::close);
    }
  }
}
