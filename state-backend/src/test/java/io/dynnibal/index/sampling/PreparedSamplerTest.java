package io.dynnibal.index.sampling;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dynnibal.index.ClusteredVectors;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A query's prepared sampler (the tree clustered once) draws what {@link NegativeSampler#sample}
 * draws, round after round, from the same generator: reusing the clustering changes no sample. A
 * batch prepared together ({@link NegativeSampler#prepareAll}) draws what its queries prepared one
 * by one draw.
 */
class PreparedSamplerTest {
  private static final FindClustering.Options CLUSTERING =
      new FindClustering.Options(20, 1e6, 0.3, 200);

  static Stream<Arguments> samplers() {
    return Stream.of(
        Arguments.of(
            "mh sampling",
            new MetropolisHastingsSampler(
                MetropolisHastingsSampler.Options.sampling(CLUSTERING, 8))),
        Arguments.of(
            "mh sampling, exact inside small clusters (filled as drawn)",
            new MetropolisHastingsSampler(
                MetropolisHastingsSampler.Options.sampling(CLUSTERING, 8, 32, 256))),
        Arguments.of(
            "mh practical (proposal depends on the count)",
            new MetropolisHastingsSampler(
                MetropolisHastingsSampler.Options.practical(CLUSTERING, 8))),
        Arguments.of(
            "rejection",
            new RejectionSampler(new FindClustering.Options(20, 4, 0.0, 100_000), 1_000_000)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("samplers")
  void roundsFromOnePreparationDrawWhatFreshSamplingDraws(String name, NegativeSampler sampler) {
    SamplerFixture f = new SamplerFixture(2_000, 8, 35);
    SplittableRandom fresh = new SplittableRandom(35);
    SplittableRandom reused = new SplittableRandom(35);
    NegativeSampler.Prepared prepared = sampler.prepare(f.tree, f.query);
    for (int count : new int[] {1, 3, 1, 8}) {
      Samples expected = sampler.sample(f.tree, f.query, count, fresh);
      Samples actual = prepared.sample(count, reused);
      assertArrayEquals(expected.targets(), actual.targets(), name + ", count " + count);
      assertArrayEquals(expected.logits(), actual.logits());
      assertEquals(expected.proposals(), actual.proposals());
      assertEquals(expected.accepted(), actual.accepted());
      assertEquals(expected.logMass(), actual.logMass());
    }
  }

  /**
   * Queries of a batch sampled in an order that revisits them (MH prepares the batch in shared
   * workspaces, a query again when another one took them over since) get what they get alone.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("samplers")
  void aBatchPreparedTogetherDrawsWhatEachQueryPreparedAloneDraws(
      String name, NegativeSampler sampler) {
    SamplerFixture f = new SamplerFixture(2_000, 8, 36);
    SplittableRandom near = new SplittableRandom(36);
    float[][] queries = new float[5][];
    for (int q = 0; q < queries.length; q++) {
      queries[q] = ClusteredVectors.queryNear(f.vectors[near.nextInt(2_000)], 0.3, near);
    }
    NegativeSampler.Prepared[] alone = new NegativeSampler.Prepared[queries.length];
    for (int q = 0; q < queries.length; q++) {
      alone[q] = sampler.prepare(f.tree, queries[q]);
    }
    NegativeSampler.Prepared[] together = sampler.prepareAll(f.tree, queries, null);
    SplittableRandom expectedRandom = new SplittableRandom(37);
    SplittableRandom actualRandom = new SplittableRandom(37);
    for (int q : new int[] {0, 1, 1, 2, 0, 4, 3, 1, 4}) {
      Samples expected = alone[q].sample(3, expectedRandom);
      Samples actual = together[q].sample(3, actualRandom);
      assertArrayEquals(expected.targets(), actual.targets(), name + ", query " + q);
      assertArrayEquals(expected.logits(), actual.logits());
      assertEquals(expected.proposals(), actual.proposals());
      assertEquals(expected.accepted(), actual.accepted());
      assertEquals(expected.logMass(), actual.logMass());
    }
  }
}
