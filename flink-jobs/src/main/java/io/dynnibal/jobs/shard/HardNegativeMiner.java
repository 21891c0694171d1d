package io.dynnibal.jobs.shard;

import io.dynnibal.model.features.Features;
import io.dynnibal.sampler.Auto;
import io.dynnibal.sampler.DynnibalMh;
import io.dynnibal.sampler.DynnibalRejection;
import io.dynnibal.sampler.ShardMiners;
import io.dynnibal.state.ShardIndex;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.QueryBatch;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.flink.metrics.Counter;

/**
 * How a shard finds hard negatives for a batch's queries: from its SG tree over Nyström vectors
 * ({@link TreeMiner}), by brute force over a pool of full-dimension vectors ({@link PoolMiner}) or
 * by BM25 over its target texts ({@link LexicalMiner}). A query's own positive is never offered: it
 * is masked in the loss anyway, so it would only waste a slot.
 */
interface HardNegativeMiner extends AutoCloseable {

  /** A shard key's targets by id, as shipped: features, no cache vector (read-only). */
  @FunctionalInterface
  interface StoredTargets {
    TargetFeatures get(String id) throws Exception;
  }

  /** A shard key's target texts by id, as stored (null where there is none). */
  @FunctionalInterface
  interface StoredTexts {
    String get(String id) throws Exception;
  }

  /**
   * One shard key's data a miner reads.
   *
   * @param storedTargets how many of the key's stored targets have a cache vector, whether or not
   *     the pool ({@code negatives.pool}) admits them to the index (the reply's {@link
   *     ShardReply#storedTargets})
   */
  record Shard(
      int key,
      ShardIndex index,
      StoredTargets targets,
      StoredTexts texts,
      ShardModel model,
      long storedTargets) {}

  /**
   * Each offered negative with the query (index in the batch) it was mined for, in the order drawn
   * (sample mode) or best first (top-k mode), and the log of the probability that one draw of the
   * shard's sampler for that query is this target (NaN in top-k mode: chosen, not drawn); per query
   * the shard's log softmax mass without the query's positive (NaN where unknown; see {@link
   * ShardReply#logMass}); the MH chains' proposal and acceptance counts (zero for other miners).
   */
  record Mined(
      List<Integer> queryOf,
      List<TargetFeatures> targets,
      List<Float> logProbabilities,
      double[] logMass,
      long proposals,
      long accepted) {
    static Mined none() {
      return new Mined(List.of(), List.of(), List.of(), null, 0, 0);
    }

    public Mined {
      if (queryOf.size() != targets.size() || logProbabilities.size() != targets.size()) {
        throw new IllegalArgumentException(
            queryOf.size()
                + " queries and "
                + logProbabilities.size()
                + " probabilities for "
                + targets.size());
      }
    }
  }

  /**
   * Mines {@code settings.minedPerExample()} negatives for each query (the dose, or the candidates
   * the trainer re-scores), never the query's own positive.
   */
  Mined mine(Shard shard, List<Features> queries, QueryBatch batch, SplittableRandom random)
      throws Exception;

  /**
   * Says that target {@code id} of key {@code key} was stored with a new text or removed, for a
   * miner that reads texts (the others keep what they need in the tree).
   */
  default void targetChanged(int key, String id) {}

  /** Floats held at full dimension for mining by this key (the accelerator memory it implies). */
  default long floats(int key) {
    return 0;
  }

  @Override
  default void close() {}

  /** How each shard key's last batch was mined, for the metrics. */
  @FunctionalInterface
  interface MiningChoices {
    /** Shard {@code key} mined its batch by the exact softmax over its caches, or by its tree. */
    void mined(int key, boolean exactly);
  }

  /** {@link #of(ShardSettings, Counter, MiningChoices)}, the choices not reported. */
  static HardNegativeMiner of(ShardSettings settings, Counter samplingGaveUp) {
    return of(settings, samplingGaveUp, (key, exactly) -> {});
  }

  /** The miner of the configured sampler, or null when the shards mine nothing. */
  static HardNegativeMiner of(
      ShardSettings settings, Counter samplingGaveUp, MiningChoices choices) {
    return settings
        .sampler()
        .shardMiner(
            new ShardMiners<HardNegativeMiner>() {
              @Override
              public HardNegativeMiner none() {
                return null;
              }

              @Override
              public HardNegativeMiner pool(double fraction, int refreshEvery) {
                return new PoolMiner(settings, fraction, refreshEvery);
              }

              @Override
              public HardNegativeMiner metropolisHastings(DynnibalMh sampler) {
                return TreeMiner.metropolisHastings(settings, sampler, samplingGaveUp, choices);
              }

              @Override
              public HardNegativeMiner rejection(DynnibalRejection sampler) {
                return TreeMiner.rejection(settings, sampler, samplingGaveUp, choices);
              }

              @Override
              public HardNegativeMiner exactCache() {
                return TreeMiner.exact(settings, samplingGaveUp, choices);
              }

              @Override
              public HardNegativeMiner auto(Auto sampler) {
                return TreeMiner.auto(settings, sampler, samplingGaveUp, choices);
              }

              @Override
              public HardNegativeMiner lexical() {
                return new LexicalMiner(settings);
              }
            });
  }

  /** Collects a {@link Mined} result. */
  final class Collected {
    private final List<Integer> queryOf = new ArrayList<>();
    private final List<TargetFeatures> targets = new ArrayList<>();
    private final List<Float> logProbabilities = new ArrayList<>();
    private final double[] logMass;
    long proposals;
    long accepted;

    Collected(int queries) {
      logMass = new double[queries];
      java.util.Arrays.fill(logMass, Double.NaN);
    }

    /** A negative chosen for the query (top-k mode), not drawn. */
    void add(int query, TargetFeatures target) {
      add(query, target, Float.NaN);
    }

    /** A negative drawn for the query with probability {@code exp(logProbability)}. */
    void add(int query, TargetFeatures target, float logProbability) {
      queryOf.add(query);
      targets.add(target);
      logProbabilities.add(logProbability);
    }

    void logMass(int query, double value) {
      logMass[query] = value;
    }

    Mined result() {
      return new Mined(queryOf, targets, logProbabilities, logMass, proposals, accepted);
    }
  }

  /**
   * {@code log(exp(logMass) - exp(logit))}: a mass without one of its targets, floored at a
   * thousandth of the mass (the estimate may be smaller than the one target it should contain).
   */
  static double withoutOne(double logMass, double logit) {
    double rest = 1 - Math.exp(logit - logMass);
    return logMass + Math.log(Math.max(rest, 1e-3));
  }
}
