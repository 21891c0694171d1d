package io.dynnibal.jobs.shard;

import io.dynnibal.index.VectorMath;
import io.dynnibal.index.sampling.ExactSampler;
import io.dynnibal.index.sampling.FindClustering;
import io.dynnibal.index.sampling.MetropolisHastingsSampler;
import io.dynnibal.index.sampling.NegativeSampler;
import io.dynnibal.index.sampling.RejectionSampler;
import io.dynnibal.index.sampling.Samples;
import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.sampler.Auto;
import io.dynnibal.sampler.DynnibalMh;
import io.dynnibal.sampler.DynnibalRejection;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.QueryBatch;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.IntFunction;
import org.apache.flink.metrics.Counter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DyNNIBAL's hard negatives: each query projected into the cache space and sampled from the shard's
 * SG tree by the Metropolis-Hastings or the rejection sampler, or from the exact softmax over all
 * of its vectors, {@code negatives.per.example} per query without its own positive: drawn from the
 * softmax (sample mode; a draw of the positive is drawn again) or the best of the draws (top-k
 * mode). Each query's shard mass (the sampler's normaliser estimate, the positive's cache mass
 * taken out) lets the merge weigh the shards.
 */
final class TreeMiner implements HardNegativeMiner {
  private static final Logger LOG = LoggerFactory.getLogger(TreeMiner.class);

  /**
   * FindClustering's gamma for the MH proposal: so large that only the cluster budget ({@code
   * mh.cluster.share}, {@code mh.max.clusters}) bounds the partition.
   */
  static final double MH_GAMMA = 1e6;

  /** FindClustering stops splitting clusters whose radius is below this (unit-norm vectors). */
  static final double DEEPEST_RADIUS = 0.3;

  /**
   * Rounds of draws per query in sample mode: a draw of the query's own positive is discarded and
   * drawn again (sampling from the softmax without it); a positive that holds nearly all the mass
   * may leave the query short after this many rounds.
   */
  static final int SAMPLE_ROUNDS = 4;

  /** The sampler for a shard of the given size (MH's cluster budget is a share of it). */
  private final IntFunction<NegativeSampler> samplerForTargets;

  private final int perExample;
  private final boolean topK;
  private final double beta;
  private final boolean mayGiveUp;
  private final Counter gaveUp;
  private final MiningChoices choices;

  private TreeMiner(
      IntFunction<NegativeSampler> samplerForTargets,
      ShardSettings settings,
      boolean topK,
      boolean mayGiveUp,
      Counter gaveUp,
      MiningChoices choices) {
    this.samplerForTargets = samplerForTargets;
    this.perExample = settings.minedPerExample();
    this.topK = topK;
    this.beta = settings.samplingScale();
    this.mayGiveUp = mayGiveUp;
    this.gaveUp = gaveUp;
    this.choices = choices;
  }

  /** Metropolis-Hastings over the tree, its cluster budget a share of the shard (Alg. 3). */
  static TreeMiner metropolisHastings(
      ShardSettings s, DynnibalMh mh, Counter gaveUp, MiningChoices choices) {
    boolean topK = s.negativesMode() == NegativesMode.TOP_K;
    return new TreeMiner(mhByBudget(s, mh, topK), s, topK, false, gaveUp, choices);
  }

  /**
   * Exact rejection sampling over the tree (Alg. 2). It starts from a fine partition (a small
   * gamma, a large cluster budget), not the MH proposal's coarse one, and gives up on a sample
   * after {@link DynnibalRejection#maxProposals}; in top-k mode it keeps the best of its exact
   * samples.
   */
  static TreeMiner rejection(
      ShardSettings s, DynnibalRejection r, Counter gaveUp, MiningChoices choices) {
    boolean topK = s.negativesMode() == NegativesMode.TOP_K;
    NegativeSampler rejection =
        new RejectionSampler(
            new FindClustering.Options(
                s.samplingScale(), r.gamma(), DEEPEST_RADIUS, r.maxClusters()),
            r.maxProposals());
    return new TreeMiner(targets -> rejection, s, topK, true, gaveUp, choices);
  }

  /** The exact softmax over the shard's caches ({@link ExactSampler}), one blocked pass a batch. */
  static TreeMiner exact(ShardSettings s, Counter gaveUp, MiningChoices choices) {
    boolean topK = s.negativesMode() == NegativesMode.TOP_K;
    NegativeSampler exact = exactSampler(s, topK);
    return new TreeMiner(targets -> exact, s, topK, false, gaveUp, choices);
  }

  /**
   * {@link #exact} for a shard within {@link Auto#exactFor} at the cache's d' ({@code landmarks}),
   * {@link #metropolisHastings} for a larger one: chosen again for every batch.
   */
  static TreeMiner auto(ShardSettings s, Auto auto, Counter gaveUp, MiningChoices choices) {
    boolean topK = s.negativesMode() == NegativesMode.TOP_K;
    NegativeSampler exact = exactSampler(s, topK);
    IntFunction<NegativeSampler> mh = mhByBudget(s, auto.mh(), topK);
    return new TreeMiner(
        targets -> auto.exactFor(targets, s.landmarks()) ? exact : mh.apply(targets),
        s,
        topK,
        false,
        gaveUp,
        choices);
  }

  private static NegativeSampler exactSampler(ShardSettings s, boolean topK) {
    // Top-k asks for one more than it keeps: the positive may be among the best.
    return new ExactSampler(s.samplingScale(), topK, s.minedPerExample() + 1);
  }

  /**
   * MH over a shard of n targets, with the budget {@link DynnibalMh#clusters} gives it; the sampler
   * of the last budget is kept (the budget moves only as the shard grows or shrinks).
   */
  private static IntFunction<NegativeSampler> mhByBudget(
      ShardSettings s, DynnibalMh mh, boolean topK) {
    return new IntFunction<>() {
      private int budget = -1;
      private NegativeSampler sampler;

      @Override
      public NegativeSampler apply(int targets) {
        int wanted = mh.clusters(targets);
        if (wanted != budget) {
          FindClustering.Options clustering =
              new FindClustering.Options(s.samplingScale(), MH_GAMMA, DEEPEST_RADIUS, wanted);
          sampler =
              new MetropolisHastingsSampler(
                  topK
                      ? MetropolisHastingsSampler.Options.practical(
                          clustering, mh.candidatesPerNegative())
                      : MetropolisHastingsSampler.Options.sampling(
                          clustering, mh.chainLength(), mh.exactInside(), mh.exactTargets()));
          budget = wanted;
        }
        return sampler;
      }
    };
  }

  @Override
  public Mined mine(Shard shard, List<Features> queries, QueryBatch batch, SplittableRandom random)
      throws Exception {
    float[][] z = shard.model().queryCaches(queries);
    // The budget is a share of the shard's targets, not of the pool's: a pool of the named targets
    // only (negatives.pool=positives) starts empty and grows, and a share of it would leave MH few
    // clusters for most of a run.
    NegativeSampler sampler =
        samplerForTargets.apply((int) Math.min(Integer.MAX_VALUE, shard.storedTargets()));
    choices.mined(shard.key(), sampler instanceof ExactSampler);
    Collected out = new Collected(z.length);
    // Clustered (or, exactly, scored) once for all rounds and, where the sampler can, for all
    // queries together: a trained model often draws the query's own positive, and clustering the
    // tree anew for each round repeated the costliest part of mining.
    NegativeSampler.Prepared[] prepared = shard.index().prepareAll(sampler, z);
    for (int q = 0; q < z.length; q++) {
      String positive = batch.targetIds[q];
      double positiveLogit = Double.NaN;
      float[] p = shard.index().vectorOf(positive);
      if (p != null) {
        positiveLogit = beta * VectorMath.dot(z[q], p);
      }
      Map<String, TargetFeatures> best = topK ? new HashMap<>() : null;
      int taken = 0;
      double drawMass = Double.NaN; // the normaliser of the softmax the draws follow
      for (int round = 0; round < (topK ? 1 : SAMPLE_ROUNDS) && taken < perExample; round++) {
        Samples samples;
        try {
          // Top-k asks for one more than it keeps: the positive may be among the best.
          samples = prepared[q].sample(topK ? perExample + 1 : perExample - taken, random);
        } catch (IllegalStateException e) {
          if (!mayGiveUp) {
            throw e; // a bug, not a sampler's documented limit
          }
          // Rejection sampling gave up (a partition too coarse for this query): this query gets no
          // hard negative from this shard; the batch still trains. Counted, so a user sees when to
          // refine the partition.
          gaveUp.inc();
          if (gaveUp.getCount() == 1 || gaveUp.getCount() % 1000 == 0) {
            LOG.warn(
                "{} (query {} of batch {}; {} times so far)",
                e.getMessage(),
                q,
                batch.batchId,
                gaveUp.getCount());
          }
          break;
        }
        out.proposals += samples.proposals();
        out.accepted += samples.accepted();
        if (round == 0 && !Double.isNaN(samples.logMass())) {
          drawMass =
              Double.isNaN(positiveLogit)
                  ? samples.logMass()
                  : HardNegativeMiner.withoutOne(samples.logMass(), positiveLogit);
          out.logMass(q, drawMass);
        }
        for (int i = 0; i < samples.size(); i++) {
          String id = shard.index().idOf(samples.targets()[i]);
          if (id.equals(positive)) {
            continue;
          }
          if (topK) {
            best.putIfAbsent(id, shard.targets().get(id).withoutCache((float) samples.logits()[i]));
          } else if (taken < perExample) {
            // MH's chains and rejection sampling follow the softmax over the shard's caches (a
            // draw of the positive is drawn again: without it).
            out.add(
                q,
                shard.targets().get(id).withoutCache((float) samples.logits()[i]),
                (float) (samples.logits()[i] - drawMass));
            taken++;
          }
        }
      }
      if (topK) {
        int query = q;
        best.values().stream()
            .sorted(
                Comparator.comparingDouble((TargetFeatures t) -> -t.logit).thenComparing(t -> t.id))
            .limit(perExample)
            .forEachOrdered(t -> out.add(query, t));
      }
    }
    return out.result();
  }
}
