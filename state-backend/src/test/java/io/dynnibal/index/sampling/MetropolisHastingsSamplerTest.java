package io.dynnibal.index.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.sgtree.Neighbor;
import io.dynnibal.index.sgtree.SgTreeSearch;
import io.dynnibal.index.sgtree.Similarity;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class MetropolisHastingsSamplerTest {
  static final double BETA = 12;

  /**
   * A coarse partition (44 clusters for 400 targets) so that the proposal alone is far from the
   * softmax.
   */
  static final FindClustering.Options COARSE = new FindClustering.Options(BETA, 1e12, 0.0, 30);

  /**
   * The distance to the softmax a chain of 32 must reach: above the sampling noise of 40,000 exact
   * draws over these 400 targets, well below the bare proposal's distance.
   */
  static final double TV_BOUND = 0.06;

  private static double tvAfter(SamplerFixture f, int chainLength) {
    return tvAfter(f, chainLength, 0, 0);
  }

  private static double tvAfter(
      SamplerFixture f, int chainLength, int exactInside, int exactTargets) {
    int draws = 40_000;
    Samples samples =
        new MetropolisHastingsSampler(
                MetropolisHastingsSampler.Options.sampling(
                    COARSE, chainLength, exactInside, exactTargets))
            .sample(f.tree, f.query, draws, new SplittableRandom(chainLength));
    return Softmax.totalVariation(
        Softmax.empirical(f.histogram(samples.targets()), draws),
        Softmax.of(f.vectors, f.query, BETA));
  }

  @Test
  void totalVariationToTheSoftmaxFallsAsTheChainGrowsAndEndsUnderTheBound() {
    SamplerFixture f = new SamplerFixture(400, 8, 51);
    double tv1 = tvAfter(f, 1);
    double tv4 = tvAfter(f, 4);
    double tv32 = tvAfter(f, 32);
    assertTrue(tv1 > tv4 && tv4 > tv32, "TV " + tv1 + ", " + tv4 + ", " + tv32);
    assertTrue(tv32 < TV_BOUND, "TV after 32 steps " + tv32);
  }

  /**
   * Drawing exactly inside the small clusters, and weighing the heaviest of them by their exact
   * mass, changes the proposal, not the target of the chain: it still ends at the softmax. (Whether
   * it gets there sooner is an empirical question for real models: on this small fixture the
   * difference after a few steps is within the sampling noise.)
   */
  @Test
  void anExactProposalInsideSmallClustersKeepsTheChainExact() {
    SamplerFixture f = new SamplerFixture(400, 8, 51);
    double inside = tvAfter(f, 32, 16, 0);
    double weighed = tvAfter(f, 32, 16, 64);
    assertTrue(inside < TV_BOUND && weighed < TV_BOUND, "TV after 32: " + inside + ", " + weighed);
  }

  /** A chain that never moves is a plain draw from Q: the bound above must reject it. */
  @Test
  void aChainThatNeverMovesFailsTheBound() {
    SamplerFixture f = new SamplerFixture(400, 8, 51);
    double tv = tvAfter(f, 1);
    assertTrue(
        tv > 2 * TV_BOUND,
        "the proposal is already within " + tv + " of the softmax: the test is vacuous");
  }

  @Test
  void aChainThatNeverMovesProposesNothingAndEstimatesTheMass() {
    SamplerFixture f = new SamplerFixture(400, 8, 54);
    Samples samples =
        new MetropolisHastingsSampler(MetropolisHastingsSampler.Options.sampling(COARSE, 1))
            .sample(f.tree, f.query, 100, new SplittableRandom(2));
    assertEquals(0, samples.proposals());
    assertEquals(0, samples.accepted());
    // The proposal scores each target through its cluster's representative: its normaliser is the
    // softmax's within a factor exp(beta * radius) either way.
    double exact = Softmax.logPartition(f.vectors, f.query, BETA);
    assertTrue(
        Math.abs(samples.logMass() - exact) < BETA * 1.0,
        "log mass " + samples.logMass() + " vs exact " + exact);
  }

  @Test
  void chainsMoveAndSometimesReject() {
    SamplerFixture f = new SamplerFixture(400, 8, 52);
    Samples samples =
        new MetropolisHastingsSampler(MetropolisHastingsSampler.Options.exact(COARSE, 10))
            .sample(f.tree, f.query, 1_000, new SplittableRandom(1));
    // A chain's first state is a draw, not a proposal: 9 proposals per chain of 10.
    assertEquals(9_000, samples.proposals());
    assertTrue(
        samples.acceptanceRate() > 0.1 && samples.acceptanceRate() < 1,
        "rate " + samples.acceptanceRate());
  }

  @Test
  void thePracticalVariantReturnsDistinctHardNegativesBestFirst() {
    SamplerFixture f = new SamplerFixture(3_000, 8, 53);
    MetropolisHastingsSampler practical =
        new MetropolisHastingsSampler(
            MetropolisHastingsSampler.Options.practical(
                new FindClustering.Options(20, 1e6, 0.2, 100), 16));
    Samples samples = practical.sample(f.tree, f.query, 64, new SplittableRandom(2));
    Set<Integer> distinct = new HashSet<>();
    for (int i = 0; i < samples.size(); i++) {
      distinct.add(samples.targets()[i]);
      if (i > 0) {
        assertTrue(samples.logits()[i] <= samples.logits()[i - 1]);
      }
    }
    assertEquals(samples.size(), distinct.size());
    List<Neighbor> top = SgTreeSearch.exact(f.tree, f.query, 64, Similarity.INNER_PRODUCT);
    long overlap = top.stream().filter(n -> distinct.contains(n.target())).count();
    assertTrue(overlap >= 16, "only " + overlap + " of the exact top 64");
  }

  @Test
  void aDeletedTargetIsNeverSampledAgain() {
    SamplerFixture f = new SamplerFixture(500, 8, 54);
    MetropolisHastingsSampler sampler =
        new MetropolisHastingsSampler(MetropolisHastingsSampler.Options.exact(COARSE, 8));
    Set<Integer> deleted = new HashSet<>();
    for (int target : sampler.sample(f.tree, f.query, 200, new SplittableRandom(3)).targets()) {
      if (deleted.size() < 50 && deleted.add(target)) {
        f.tree.delete(target);
      }
    }
    RejectionSampler exact =
        new RejectionSampler(new FindClustering.Options(BETA, 2, 0.0, 100_000), 1_000_000);
    for (int target : sampler.sample(f.tree, f.query, 20_000, new SplittableRandom(4)).targets()) {
      assertTrue(!deleted.contains(target), "deleted target " + target + " sampled by MH");
    }
    for (int target : exact.sample(f.tree, f.query, 20_000, new SplittableRandom(5)).targets()) {
      assertTrue(!deleted.contains(target), "deleted target " + target + " sampled by rejection");
    }
  }
}
