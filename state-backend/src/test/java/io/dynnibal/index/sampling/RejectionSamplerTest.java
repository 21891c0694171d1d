package io.dynnibal.index.sampling;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RejectionSamplerTest {

  /**
   * Exact whatever the starting partition, from coarse (P/Q up to 100) to fine. Coarser starts are
   * exact too but restart so often that they are useless: see {@link RejectionSampler}.
   */
  @ParameterizedTest
  @CsvSource({"100, 0.0, 100000", "4, 0.2, 1000", "1.5, 0.0, 100000"})
  void passesAChiSquareTestAgainstTheExactSoftmax(double gamma, double deepest, int cap) {
    SamplerFixture f = new SamplerFixture(1_500, 8, 41);
    double beta = 8;
    RejectionSampler sampler =
        new RejectionSampler(new FindClustering.Options(beta, gamma, deepest, cap), 1_000_000);
    int draws = 30_000;
    Samples samples = sampler.sample(f.tree, f.query, draws, new SplittableRandom(5));
    double[] chi =
        Softmax.chiSquare(
            f.histogram(samples.targets()), Softmax.of(f.vectors, f.query, beta), draws);
    double critical = Softmax.chiSquareQuantile(chi[1], 3.09);
    assertTrue(chi[0] < critical, "chi2 " + chi[0] + " >= " + critical + " at df " + chi[1]);
  }

  /** The test above must be able to fail: plain draws from the proposal Q are not the softmax. */
  @ParameterizedTest
  @CsvSource({"8"})
  void theChiSquareTestRejectsTheProposalItself(double beta) {
    SamplerFixture f = new SamplerFixture(1_500, 8, 41);
    MetropolisHastingsSampler proposalOnly =
        new MetropolisHastingsSampler(
            MetropolisHastingsSampler.Options.exact(
                new FindClustering.Options(beta, 1e6, 0.0, 1_000), 1));
    int draws = 30_000;
    Samples samples = proposalOnly.sample(f.tree, f.query, draws, new SplittableRandom(5));
    double[] chi =
        Softmax.chiSquare(
            f.histogram(samples.targets()), Softmax.of(f.vectors, f.query, beta), draws);
    assertTrue(
        chi[0] > Softmax.chiSquareQuantile(chi[1], 3.09), "chi2 " + chi[0] + " at df " + chi[1]);
  }

  @ParameterizedTest
  @CsvSource({"8"})
  void aSeedReproducesTheSamples(double beta) {
    SamplerFixture f = new SamplerFixture(1_000, 8, 42);
    RejectionSampler sampler =
        new RejectionSampler(new FindClustering.Options(beta, 4, 0.2, 1000), 100_000);
    int[] first = sampler.sample(f.tree, f.query, 200, new SplittableRandom(9)).targets();
    int[] second = sampler.sample(f.tree, f.query, 200, new SplittableRandom(9)).targets();
    assertArrayEquals(first, second);
  }

  /**
   * The exactness argument in one inequality, checked at every node: a node's own mass plus its
   * children's envelopes never exceed its own envelope, for random queries, after random inserts
   * and deletes.
   */
  @org.junit.jupiter.api.Test
  void envelopesNestAtEveryNodeAfterInsertsAndDeletes() {
    SamplerFixture f = new SamplerFixture(1_000, 8, 43);
    SplittableRandom random = new SplittableRandom(8);
    float[][] extra = io.dynnibal.index.TreeVectors.clustered(500, 8, 44);
    for (int i = 0; i < extra.length; i++) {
      f.tree.insert(10_000 + i, extra[i]);
      f.tree.delete(random.nextInt(1_000));
    }
    double beta = 8;
    for (int q = 0; q < 20; q++) {
      float[] query =
          io.dynnibal.index.ClusteredVectors.queryNear(
              f.vectors[random.nextInt(1_000)], 0.5, random);
      double norm = io.dynnibal.index.VectorMath.norm(query);
      java.util.ArrayDeque<io.dynnibal.index.sgtree.SgNode> stack = new java.util.ArrayDeque<>();
      stack.push(f.tree.root());
      while (!stack.isEmpty()) {
        io.dynnibal.index.sgtree.SgNode n = stack.pop();
        double logEnvelope =
            Math.log(n.size())
                + beta * (io.dynnibal.index.VectorMath.dot(query, n.vector()) + norm * n.radius());
        double inside =
            n.ownTargetCount()
                * Math.exp(
                    beta * io.dynnibal.index.VectorMath.dot(query, n.vector()) - logEnvelope);
        for (int i = 0; i < n.childCount(); i++) {
          io.dynnibal.index.sgtree.SgNode c = n.child(i);
          inside +=
              Math.exp(
                  Math.log(c.size())
                      + beta
                          * (io.dynnibal.index.VectorMath.dot(query, c.vector())
                              + norm * c.radius())
                      - logEnvelope);
          stack.push(c);
        }
        assertTrue(inside <= 1 + 1e-12, "own + children = " + inside + " of the envelope at " + n);
      }
    }
  }
}
