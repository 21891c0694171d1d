package io.dynnibal.index.sampling;

import io.dynnibal.index.sgtree.SgTree;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.random.RandomGenerator;
import java.util.stream.IntStream;

/**
 * Independent Metropolis-Hastings with the cluster proposal Q of Eq. 6 (paper §3.3, Alg. 5's
 * sampling step).
 *
 * <p>A chain starts from a draw of Q and makes {@code chainLength - 1} more proposals y' ~ Q, each
 * accepted with probability {@code min(1, P(y') Q(y) / (P(y) Q(y')))}, where Q is the probability
 * of the <em>target</em> ({@link ClusterProposal.Draw#logQ}: {@code exp(beta <x, rep(y)>) / Z_hat}
 * under Eq. 6), not of its cluster: the cluster size cancels only in that form. With {@code P/Q <=
 * gamma} everywhere (FindClustering's guarantee) the chain's distance to the softmax falls like
 * {@code (1 - 1/gamma)^(s-1)}.
 *
 * <p>Three modes:
 *
 * <ul>
 *   <li>{@link Options#exact}: {@code count} independent chains, the last state of each is a sample
 *       (with repeats);
 *   <li>{@link Options#sampling}: the same over FindClustering's partition (its budget of clusters,
 *       finer near the query): the training sampler that draws from the softmax, as the paper's
 *       method intends, rather than keeping the best;
 *   <li>{@link Options#practical} (the paper's training setting, App. D): the proposal restricted
 *       to the closest clusters (highest representative score), chains of length 2, and the {@code
 *       count} highest-scoring distinct targets seen across all chains. Harder negatives, no longer
 *       an unbiased sample. The paper keeps a fixed top-k of clusters; here the closest clusters
 *       are kept until they hold {@code candidatesPerSample} targets per requested negative,
 *       because how many targets k clusters hold depends on how fine FindClustering went (a fixed k
 *       starves the proposal on fine partitions, which then yields too few distinct negatives).
 * </ul>
 */
public final class MetropolisHastingsSampler implements NegativeSampler {

  /**
   * @param clustering how to partition the targets per query
   * @param chainLength proposals per chain, the first included (1: a plain draw from Q, the chain
   *     never moves)
   * @param candidatesPerSample restrict the proposal to the highest-scoring clusters that together
   *     hold this many targets per requested sample; 0 keeps all clusters
   * @param keepTopScoring return the best distinct targets seen across chains instead of each
   *     chain's last state
   * @param chainsPerSample chains run per requested sample (1 in exact mode)
   * @param exactInside the proposal draws exactly inside clusters of at most this many targets
   *     ({@link ClusterProposal}; 0: uniformly inside every cluster, as Eq. 6)
   * @param exactTargets the heaviest of those clusters are weighed by their exact mass until they
   *     hold this many targets (0: none; taken as 0 when {@code exactInside} is 0)
   */
  public record Options(
      FindClustering.Options clustering,
      int chainLength,
      int candidatesPerSample,
      boolean keepTopScoring,
      int chainsPerSample,
      int exactInside,
      int exactTargets) {
    public Options {
      if (exactInside < 0 || exactTargets < 0) {
        throw new IllegalArgumentException(
            "exactInside and exactTargets must be >= 0, got " + exactInside + ", " + exactTargets);
      }
      // Only clusters drawn from exactly are weighed exactly: without them there is nothing to
      // weigh, so the budget is dropped rather than refused (mh.exact.inside=0 is Eq. 6 whatever
      // mh.exact.targets says).
      if (exactInside == 0) {
        exactTargets = 0;
      }
      if (candidatesPerSample > 0 && exactInside > 0) {
        throw new IllegalArgumentException(
            "the proposal over the closest clusters (candidatesPerSample) draws uniformly inside"
                + " them: exactInside must be 0");
      }
      if (chainsPerSample < 1 || (!keepTopScoring && chainsPerSample != 1)) {
        throw new IllegalArgumentException(
            "chainsPerSample must be 1 in exact mode and >= 1 otherwise, got " + chainsPerSample);
      }
      if (chainLength < 1) {
        throw new IllegalArgumentException("chainLength must be >= 1, got " + chainLength);
      }
      if (candidatesPerSample < 0) {
        throw new IllegalArgumentException(
            "candidatesPerSample must be >= 0, got " + candidatesPerSample);
      }
    }

    public static Options exact(FindClustering.Options clustering, int chainLength) {
      return new Options(clustering, chainLength, 0, false, 1, 0, 0);
    }

    /** Samples from the softmax: one chain of {@code chainLength} per sample, all clusters. */
    public static Options sampling(FindClustering.Options clustering, int chainLength) {
      return sampling(clustering, chainLength, 0, 0);
    }

    /**
     * As {@link #sampling(FindClustering.Options, int)}, drawing exactly inside clusters of at most
     * {@code exactInside} targets, the heaviest weighed exactly until they hold {@code
     * exactTargets}.
     */
    public static Options sampling(
        FindClustering.Options clustering, int chainLength, int exactInside, int exactTargets) {
      return new Options(clustering, chainLength, 0, false, 1, exactInside, exactTargets);
    }

    /** The paper's setting: chains of 2 over the closest clusters, 4 chains per negative. */
    public static Options practical(FindClustering.Options clustering, int candidatesPerSample) {
      return new Options(clustering, 2, candidatesPerSample, true, 4, 0, 0);
    }
  }

  private final Options options;

  public MetropolisHastingsSampler(Options options) {
    this.options = options;
  }

  @Override
  public Prepared prepare(SgTree tree, float[] query, float[] position) {
    return prepare(tree, query, position, null, null);
  }

  /**
   * Each query of the batch clustered and proposed over in one pair of workspaces, so that mining a
   * batch allocates no partition's worth of arrays per query: a query is prepared when it is first
   * sampled, and again (the same partition and proposal) when it is sampled after another query of
   * the batch was. The draws are those of {@link #prepare}, in any order of the queries. The
   * returned samplers share the workspaces: one thread at a time.
   */
  @Override
  public Prepared[] prepareAll(SgTree tree, float[][] queries, float[][] positions) {
    Batch batch = new Batch();
    Prepared[] out = new Prepared[queries.length];
    for (int q = 0; q < queries.length; q++) {
      float[] query = queries[q];
      float[] position = positions == null ? query : positions[q];
      out[q] =
          new Prepared() {
            @Override
            public Samples sample(int count, RandomGenerator random) {
              if (batch.current != this) {
                batch.current = this;
                batch.prepared = prepare(tree, query, position, batch.clustering, batch.proposal);
              }
              return batch.prepared.sample(count, random);
            }
          };
    }
    return out;
  }

  /** The workspaces of a batch and the query that holds them. */
  private static final class Batch {
    final FindClustering.Workspace clustering = new FindClustering.Workspace();
    final ProposalWorkspace proposal = new ProposalWorkspace();
    Prepared current;
    Prepared prepared;
  }

  private Prepared prepare(
      SgTree tree,
      float[] query,
      float[] position,
      FindClustering.Workspace clustering,
      ProposalWorkspace proposals) {
    Partition partition =
        FindClustering.find(tree, query, position, options.clustering(), clustering);
    double beta = options.clustering().beta();
    // The proposal over every cluster serves any count; the practical variant's depends on it.
    ClusterProposal all =
        options.candidatesPerSample() == 0 && partition.size() > 0
            ? new ClusterProposal(
                partition, beta, query, options.exactInside(), options.exactTargets(), proposals)
            : null;
    return (count, random) -> {
      if (partition.size() == 0 || count == 0) {
        return new Samples(new int[0], new double[0], 0, 0);
      }
      ClusterProposal proposal =
          all != null
              ? all
              : new ClusterProposal(
                  partition,
                  beta,
                  closestClusters(partition, (long) options.candidatesPerSample() * count));
      return sample(proposal, query, count, random);
    };
  }

  private Samples sample(
      ClusterProposal proposal, float[] query, int count, RandomGenerator random) {
    double beta = options.clustering().beta();
    int chains = count * options.chainsPerSample();
    int[] targets = new int[chains];
    double[] logits = new double[chains];
    Map<Integer, Double> seen = new HashMap<>();
    long proposals = 0;
    long accepted = 0;
    for (int chain = 0; chain < chains; chain++) {
      // A chain's start is a draw, not a proposal: counting it as accepted would put the
      // acceptance rate of chains of 2 at 0.5 or more whatever the proposal's quality.
      ClusterProposal.Draw current = proposal.draw(random);
      double currentLogit = current.logit(query, beta);
      if (options.keepTopScoring()) {
        seen.put(current.target(), currentLogit);
      }
      for (int step = 1; step < options.chainLength(); step++) {
        ClusterProposal.Draw next = proposal.draw(random);
        double nextLogit = next.logit(query, beta);
        proposals++;
        // log of P(y') Q(y) / (P(y) Q(y')); the normalisers of P and Q cancel.
        double logRatio = (nextLogit - next.logQ()) - (currentLogit - current.logQ());
        if (logRatio >= 0 || random.nextDouble() < Math.exp(logRatio)) {
          current = next;
          currentLogit = nextLogit;
          accepted++;
          if (options.keepTopScoring()) {
            seen.put(current.target(), currentLogit);
          }
        }
      }
      targets[chain] = current.target();
      logits[chain] = currentLogit;
    }
    if (options.keepTopScoring()) {
      return Samples.best(seen, count, proposals, accepted, proposal.logNormaliser());
    }
    return new Samples(targets, logits, proposals, accepted, proposal.logNormaliser());
  }

  /** The highest-scoring clusters, best first, until they hold at least {@code targets} targets. */
  private static int[] closestClusters(Partition partition, long targets) {
    double[] scores = partition.representativeScores();
    int[] order =
        IntStream.range(0, partition.size())
            .boxed()
            .sorted(Comparator.comparingDouble((Integer c) -> -scores[c]))
            .mapToInt(Integer::intValue)
            .toArray();
    long held = 0;
    int k = 0;
    while (k < order.length && held < targets) {
      held += partition.size(order[k++]);
    }
    return Arrays.copyOf(order, k);
  }
}
