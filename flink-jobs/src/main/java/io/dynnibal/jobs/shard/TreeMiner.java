package io.dynnibal.jobs.shard;

import io.dynnibal.index.sampling.FindClustering;
import io.dynnibal.index.sampling.MetropolisHastingsSampler;
import io.dynnibal.index.sampling.NegativeSampler;
import io.dynnibal.index.sampling.RejectionSampler;
import io.dynnibal.index.sampling.Samples;
import io.dynnibal.model.features.Features;
import io.dynnibal.stream.QueryBatch;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.flink.metrics.Counter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DyNNIBAL's hard negatives: each query projected into the cache space and sampled from the shard's
 * SG tree by the Metropolis-Hastings or the rejection sampler.
 */
final class TreeMiner implements HardNegativeMiner {
  private static final Logger LOG = LoggerFactory.getLogger(TreeMiner.class);

  /**
   * FindClustering's gamma for the MH proposal: so large that only the cluster budget ({@code
   * mh.max.clusters}) bounds the partition.
   */
  static final double MH_GAMMA = 1e6;

  /** FindClustering stops splitting clusters whose radius is below this (unit-norm vectors). */
  static final double DEEPEST_RADIUS = 0.3;

  private final NegativeSampler sampler;
  private final int perQuery;
  private final boolean mayGiveUp;
  private final Counter gaveUp;

  private TreeMiner(NegativeSampler sampler, int perQuery, boolean mayGiveUp, Counter gaveUp) {
    this.sampler = sampler;
    this.perQuery = perQuery;
    this.mayGiveUp = mayGiveUp;
    this.gaveUp = gaveUp;
  }

  static TreeMiner of(ShardSettings s, Counter gaveUp) {
    return switch (s.sampler()) {
      case DYNNIBAL_MH ->
          new TreeMiner(
              new MetropolisHastingsSampler(
                  MetropolisHastingsSampler.Options.practical(
                      new FindClustering.Options(
                          s.scoreScale(), MH_GAMMA, DEEPEST_RADIUS, s.mhMaxClusters()),
                      s.mhCandidatesPerNegative())),
              s.negativesPerQuery(),
              false,
              gaveUp);
      // Exact sampling restarts about gamma times per sample: it starts from a fine partition
      // (small gamma, a large cluster budget), not the MH proposal's coarse one. Restarts beyond
      // ~100 gamma mean the partition is far coarser than asked: it gives up early, not at 100k.
      case DYNNIBAL_REJECTION ->
          new TreeMiner(
              new RejectionSampler(
                  new FindClustering.Options(
                      s.scoreScale(), s.rejectionGamma(), DEEPEST_RADIUS, s.rejectionMaxClusters()),
                  (long) Math.max(1_000, 100 * s.rejectionGamma())),
              s.negativesPerQuery(),
              true,
              gaveUp);
      default -> throw new IllegalArgumentException(s.sampler() + " does not mine the SG tree");
    };
  }

  @Override
  public Mined mine(Shard shard, List<Features> queries, QueryBatch batch, SplittableRandom random)
      throws Exception {
    float[][] z = shard.model().queryCaches(queries);
    Collected out = new Collected();
    for (int q = 0; q < z.length; q++) {
      Samples samples;
      try {
        samples = shard.index().sample(sampler, z[q], perQuery, random);
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
        continue;
      }
      out.proposals += samples.proposals();
      out.accepted += samples.accepted();
      for (int i = 0; i < samples.size(); i++) {
        String id = shard.index().idOf(samples.targets()[i]);
        if (!id.equals(batch.targetIds[q])) {
          out.add(q, shard.targets().get(id).withoutCache((float) samples.logits()[i]));
        }
      }
    }
    return out.result();
  }
}
