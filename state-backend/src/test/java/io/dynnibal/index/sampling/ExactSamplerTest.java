package io.dynnibal.index.sampling;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.TreeVectors;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ExactSamplerTest {

  @Test
  void passesAChiSquareTestAgainstTheExactSoftmax() {
    SamplerFixture f = new SamplerFixture(1_500, 8, 41);
    double beta = 8;
    int draws = 30_000;
    Samples samples =
        new ExactSampler(beta, false).sample(f.tree, f.query, draws, new SplittableRandom(5));
    double[] chi =
        Softmax.chiSquare(
            f.histogram(samples.targets()), Softmax.of(f.vectors, f.query, beta), draws);
    double critical = Softmax.chiSquareQuantile(chi[1], 3.09);
    assertTrue(chi[0] < critical, "chi2 " + chi[0] + " >= " + critical + " at df " + chi[1]);
  }

  /**
   * Shifting a query's exponentials by its bound gives every tile the mass that shifting by the
   * tile's own maximum gives, to float rounding; a query far under its bound (a sharp softmax) is
   * scored with the tiles' maxima.
   */
  @Test
  void theBoundsShiftGivesEachTileTheMassItsOwnMaximumGives() {
    SamplerFixture f = new SamplerFixture(3_000, 8, 44);
    io.dynnibal.index.sgtree.SgTreeSnapshot view = f.tree.snapshot();
    float[][] queries = {f.query, f.vectors[7], f.vectors[2_000]};
    for (double beta : new double[] {1, 8}) {
      CacheSoftmax.Scored[] bound = CacheSoftmax.score(view, queries, beta, 3);
      CacheSoftmax.Scored[] tileMax = CacheSoftmax.score(view, queries, beta, 3, null);
      for (int q = 0; q < queries.length; q++) {
        assertEquals(tileMax[q].logMass, bound[q].logMass, 1e-5, "beta " + beta + ", query " + q);
        for (int t = 0; t < tileMax[q].tileLogMass.length; t++) {
          assertEquals(tileMax[q].tileLogMass[t], bound[q].tileLogMass[t], 1e-4, "tile " + t);
        }
        assertArrayEquals(tileMax[q].bestNodes, bound[q].bestNodes);
      }
    }
    double sharp = 1e4; // every query's mass far under its bound: all scored again
    CacheSoftmax.Scored[] bound = CacheSoftmax.score(view, queries, sharp, 3);
    CacheSoftmax.Scored[] tileMax = CacheSoftmax.score(view, queries, sharp, 3, null);
    for (int q = 0; q < queries.length; q++) {
      assertArrayEquals(tileMax[q].tileLogMass, bound[q].tileLogMass, "query " + q);
    }
  }

  /** The normaliser is the softmax's (the tree's vectors are 8-bit codes of the fixture's). */
  @Test
  void itsMassIsTheSoftmaxNormaliser() {
    SamplerFixture f = new SamplerFixture(2_000, 8, 42);
    double beta = 8;
    Samples samples =
        new ExactSampler(beta, false).sample(f.tree, f.query, 1, new SplittableRandom(1));
    assertEquals(Softmax.logPartition(f.vectors, f.query, beta), samples.logMass(), 0.02);
  }

  /**
   * Duplicates of one vector share a node: together they carry the mass of as many targets, and
   * each is drawn as often as the others.
   */
  @Test
  void aNodeOfSeveralTargetsSharesItsMassAmongThem() {
    float[][] vectors = TreeVectors.clustered(200, 8, 43);
    int[] ids = new int[vectors.length + 3];
    float[][] all = new float[ids.length][];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = i;
      all[i] = i < vectors.length ? vectors[i] : vectors[0]; // three more copies of target 0
    }
    io.dynnibal.index.sgtree.SgTree tree =
        io.dynnibal.index.sgtree.SgTree.build(8, 1.3, ids, all, 43);
    int draws = 40_000;
    Samples samples =
        new ExactSampler(8, false).sample(tree, vectors[0], draws, new SplittableRandom(2));
    int[] counts = new int[ids.length];
    for (int t : samples.targets()) {
      counts[t]++;
    }
    int copies = counts[0] + counts[200] + counts[201] + counts[202];
    double[] p = Softmax.of(all, vectors[0], 8);
    assertEquals(p[0] + p[200] + p[201] + p[202], copies / (double) draws, 0.01);
    for (int t : new int[] {0, 200, 201, 202}) {
      assertEquals(0.25, counts[t] / (double) copies, 0.03, "target " + t);
    }
  }

  @Test
  void aSeedReproducesTheSamples() {
    SamplerFixture f = new SamplerFixture(1_000, 8, 44);
    ExactSampler sampler = new ExactSampler(8, false);
    int[] first = sampler.sample(f.tree, f.query, 200, new SplittableRandom(9)).targets();
    int[] second = sampler.sample(f.tree, f.query, 200, new SplittableRandom(9)).targets();
    assertArrayEquals(first, second);
  }

  /** Top-k mode: the best targets by the same logits, as brute force over the nodes ranks them. */
  @Test
  void theBestAreTheTargetsOfHighestLogitBestFirst() {
    SamplerFixture f = new SamplerFixture(1_500, 8, 45);
    double beta = 8;
    Samples all =
        new ExactSampler(beta, true).sample(f.tree, f.query, 1_500, new SplittableRandom(1));
    assertEquals(1_500, all.size());
    assertEquals(1_500, java.util.Arrays.stream(all.targets()).distinct().count());
    for (int i = 1; i < all.size(); i++) {
      assertTrue(all.logits()[i - 1] >= all.logits()[i], "best first at " + i);
    }
    Samples ten = new ExactSampler(beta, true).sample(f.tree, f.query, 10, new SplittableRandom(2));
    assertArrayEquals(java.util.Arrays.copyOf(all.targets(), 10), ten.targets());
    double[] p = Softmax.of(f.vectors, f.query, beta);
    int bestByFloats = 0;
    for (int t = 1; t < p.length; t++) {
      bestByFloats = p[t] > p[bestByFloats] ? t : bestByFloats;
    }
    // The tree scores 8-bit codes: the float vectors' best is among its first few.
    int rank = 0;
    while (all.targets()[rank] != bestByFloats) {
      rank++;
    }
    assertTrue(rank < 5, "the best by float vectors ranks " + rank);
  }

  /**
   * A batch scored together gives each query what it gets alone, draws and best alike, and the best
   * beyond what the pass keeps are the ones a larger pass keeps.
   */
  @Test
  void aBatchGivesEachQueryWhatItGetsAlone() {
    SamplerFixture f = new SamplerFixture(1_200, 8, 46);
    float[][] queries = new float[6][];
    for (int q = 0; q < queries.length; q++) {
      queries[q] = f.vectors[q * 100];
    }
    for (boolean best : new boolean[] {false, true}) {
      ExactSampler sampler = new ExactSampler(8, best, 4);
      NegativeSampler.Prepared[] batch = sampler.prepareAll(f.tree, queries, null);
      for (int q = 0; q < queries.length; q++) {
        for (int count : new int[] {3, 9}) {
          Samples together = batch[q].sample(count, new SplittableRandom(q));
          Samples alone =
              sampler.prepare(f.tree, queries[q]).sample(count, new SplittableRandom(q));
          Samples wide =
              new ExactSampler(8, best, 64)
                  .prepare(f.tree, queries[q])
                  .sample(count, new SplittableRandom(q));
          assertArrayEquals(alone.targets(), together.targets(), "query " + q + ", best " + best);
          assertArrayEquals(alone.logits(), together.logits(), 0.0);
          assertArrayEquals(wide.targets(), together.targets(), "query " + q + ", best " + best);
          assertEquals(alone.logMass(), together.logMass(), 0.0);
        }
      }
    }
  }
}
