package io.dynnibal.jobs.shard;

import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.FullDimensionPool;
import io.dynnibal.state.ShardIndex;
import io.dynnibal.state.TargetFeatures;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * One shard's brute-force pool for {@code exhaustive} and {@code stochastic-negative-mining}, and
 * when to rebuild it. Exhaustive pools every target of the shard and is rebuilt with each model
 * version the shard receives (every w steps, the paper's oracle refresh). Stochastic negative
 * mining pools a random fraction, redrawn every {@code snm.refresh.every} steps and with each new
 * model version. Members are encoded at full dimension from the features in the shard's state, by
 * the shard's current encoder.
 *
 * <p>Between rebuilds the pool's vectors are stale, by design (that is these baselines' trade-off);
 * targets deleted since are skipped when offered. A pool of every target takes the targets that
 * join the index between rebuilds before the next batch (encoded by the same model), so under
 * {@code negatives.pool=positives}, whose index grows with every batch early in a run, the oracle
 * and the fidelity probe mine what the tree sampler can draw. A random fraction is redrawn every
 * {@code snm.refresh.every} steps.
 */
final class ShardPool implements AutoCloseable {
  private final double fraction;
  private final int refreshEvery;
  private FullDimensionPool pool;
  private long builtVersion = -1;
  private long builtPeriod = -1;
  private ShardIndex builtFrom;
  private int builtJoined;
  private List<String> builtIds;
  private float[][] builtVectors;

  private ShardPool(double fraction, int refreshEvery) {
    this.fraction = fraction;
    this.refreshEvery = refreshEvery;
  }

  /**
   * A pool of a random {@code fraction} of the shard's targets, redrawn every {@code refreshEvery}
   * steps (0: never) and with each model version.
   */
  static ShardPool of(double fraction, int refreshEvery) {
    return new ShardPool(fraction, refreshEvery);
  }

  /** A pool of every target of the shard, rebuilt with each model version. */
  static ShardPool everyTarget() {
    return of(1.0, 0);
  }

  /**
   * Whether pools of these parameters hold every target at every model version, and nothing else:
   * what the exhaustive oracle mines and the fidelity probe measures against.
   */
  static boolean isEveryTarget(double fraction, int refreshEvery) {
    return fraction >= 1 && refreshEvery == 0;
  }

  /** The pool to mine {@code batchId} with, rebuilt first when due. */
  FullDimensionPool forBatch(
      long batchId,
      ShardModel model,
      ShardIndex index,
      HardNegativeMiner.StoredTargets state,
      long seed)
      throws Exception {
    long period = refreshEvery == 0 ? 0 : batchId / refreshEvery;
    boolean everyTarget = fraction >= 1;
    if (pool != null
        && builtVersion == model.version
        && builtPeriod == period
        && (!everyTarget || builtFrom == index)) {
      if (everyTarget && index.joined() > builtJoined) {
        List<String> newcomers = index.idsJoinedSince(builtJoined);
        List<String> ids = new ArrayList<>(builtIds);
        ids.addAll(newcomers);
        float[][] fresh = encode(newcomers, model, state);
        float[][] vectors = Arrays.copyOf(builtVectors, builtVectors.length + fresh.length);
        System.arraycopy(fresh, 0, vectors, builtVectors.length, fresh.length);
        build(ids, vectors, model, index);
      }
      return pool;
    }
    List<String> ids =
        everyTarget
            ? index.ids()
            : draw(index, seed ^ (period * 0x9E3779B97F4A7C15L) ^ model.version);
    build(ids, encode(ids, model, state), model, index);
    builtVersion = model.version;
    builtPeriod = period;
    return pool;
  }

  /** A rebuild of a pool of every target in progress ({@link #forBatchGradually}). */
  private static final class Rebuild {
    final long version;
    final ShardIndex from;
    final int joined;
    final List<String> ids;
    final float[][] vectors;
    int next;

    Rebuild(long version, ShardIndex from) {
      this.version = version;
      this.from = from;
      this.joined = from.joined();
      this.ids = from.ids();
      this.vectors = new float[ids.size()][];
    }
  }

  private Rebuild rebuilding;

  /**
   * {@link #forBatch} for a pool of every target, except that a rebuild encodes at most {@code
   * slice} targets per call and answers null until it is complete: for a measurement that may skip
   * batches, so that no batch waits for a whole shard's re-encoding. Targets deleted during the
   * rebuild are left out; those that joined meanwhile are added once it completes, as between
   * rebuilds.
   */
  FullDimensionPool forBatchGradually(
      long batchId,
      ShardModel model,
      ShardIndex index,
      HardNegativeMiner.StoredTargets state,
      long seed,
      int slice)
      throws Exception {
    if (fraction < 1) {
      throw new IllegalStateException("a gradual rebuild is for a pool of every target");
    }
    if (pool != null && builtVersion == model.version && builtFrom == index) {
      return forBatch(batchId, model, index, state, seed);
    }
    if (rebuilding == null || rebuilding.version != model.version || rebuilding.from != index) {
      rebuilding = new Rebuild(model.version, index);
    }
    Rebuild r = rebuilding;
    int end = Math.min(r.ids.size(), r.next + slice);
    List<String> sliceIds = new ArrayList<>(end - r.next);
    List<Features> features = new ArrayList<>(end - r.next);
    List<Integer> at = new ArrayList<>(end - r.next);
    for (int i = r.next; i < end; i++) {
      TargetFeatures t = state.get(r.ids.get(i));
      if (t != null) { // deleted since the rebuild began
        sliceIds.add(t.id);
        features.add(Features.of(t));
        at.add(i);
      }
    }
    if (!features.isEmpty()) {
      float[][] encoded = model.encoder.encodeTargets(features);
      for (int j = 0; j < encoded.length; j++) {
        r.vectors[at.get(j)] = encoded[j];
      }
    }
    r.next = end;
    if (r.next < r.ids.size()) {
      return null;
    }
    List<String> ids = new ArrayList<>(r.ids.size());
    List<float[]> vectors = new ArrayList<>(r.ids.size());
    for (int i = 0; i < r.ids.size(); i++) {
      if (r.vectors[i] != null) {
        ids.add(r.ids.get(i));
        vectors.add(r.vectors[i]);
      }
    }
    build(ids, vectors.toArray(new float[0][]), model, index);
    builtJoined = r.joined; // those that joined during the rebuild are added next
    builtVersion = r.version;
    builtPeriod = 0;
    rebuilding = null;
    return forBatch(batchId, model, index, state, seed);
  }

  private static float[][] encode(
      List<String> ids, ShardModel model, HardNegativeMiner.StoredTargets state) throws Exception {
    List<Features> features = new ArrayList<>(ids.size());
    for (String id : ids) {
      features.add(Features.of(state.get(id)));
    }
    return ids.isEmpty() ? new float[0][] : model.encoder.encodeTargets(features);
  }

  private void build(List<String> ids, float[][] vectors, ShardModel model, ShardIndex index) {
    close();
    pool = FullDimensionPool.of(ids, vectors, model.encoder.config().outputDim());
    builtFrom = index;
    builtJoined = index.joined();
    builtIds = ids;
    builtVectors = vectors;
  }

  /** ceil(fraction x size) distinct targets, uniformly. */
  private List<String> draw(ShardIndex index, long seed) {
    int wanted = (int) Math.min(index.size(), Math.ceil(fraction * index.size()));
    SplittableRandom random = new SplittableRandom(seed);
    Set<String> chosen = new LinkedHashSet<>();
    while (chosen.size() < wanted) {
      chosen.add(index.uniform(random));
    }
    return new ArrayList<>(chosen);
  }

  long floats() {
    return pool == null ? 0 : pool.floats();
  }

  @Override
  public void close() {
    if (pool != null) {
      pool.close();
      pool = null;
    }
  }
}
