package io.dynnibal.index.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.sgtree.SgNode;
import io.dynnibal.index.sgtree.SgTree;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Deleting the last target of a node with children leaves the node hollow ({@link SgTree#delete}):
 * the exact samplers still draw from the softmax over the targets left, never a deleted one.
 */
class HollowNodesSamplingTest {
  private static final double BETA = 8;

  /** Deletes the target of every inner node holding exactly one; returns how many. */
  private static int hollowOutInnerNodes(SamplerFixture f, boolean[] deleted) {
    Deque<SgNode> stack = new ArrayDeque<>(List.of(f.tree.root()));
    int n = 0;
    while (!stack.isEmpty()) {
      SgNode node = stack.pop();
      for (int i = 0; i < node.childCount(); i++) {
        stack.push(node.child(i));
      }
      if (node != f.tree.root() && node.childCount() > 0 && node.ownTargetCount() == 1) {
        int target = node.ownTarget(0);
        assertTrue(f.tree.delete(target));
        deleted[target] = true;
        n++;
      }
    }
    return n;
  }

  private static double[] softmaxWithout(SamplerFixture f, boolean[] deleted) {
    double[] p = Softmax.of(f.vectors, f.query, BETA);
    double kept = 0;
    for (int i = 0; i < p.length; i++) {
      if (deleted[i]) {
        p[i] = 0;
      }
      kept += p[i];
    }
    for (int i = 0; i < p.length; i++) {
      p[i] /= kept;
    }
    return p;
  }

  private static void assertDrawsFollow(
      SamplerFixture f, NegativeSampler sampler, boolean[] deleted) {
    int draws = 30_000;
    Samples samples = sampler.sample(f.tree, f.query, draws, new SplittableRandom(5));
    for (int t : samples.targets()) {
      assertTrue(!deleted[t], "deleted target " + t + " drawn");
    }
    double[] chi =
        Softmax.chiSquare(f.histogram(samples.targets()), softmaxWithout(f, deleted), draws);
    double critical = Softmax.chiSquareQuantile(chi[1], 3.09);
    assertTrue(chi[0] < critical, "chi2 " + chi[0] + " >= " + critical + " at df " + chi[1]);
  }

  @Test
  void rejectionSamplingStaysExactOverHollowNodes() {
    SamplerFixture f = new SamplerFixture(1_500, 8, 41);
    boolean[] deleted = new boolean[f.vectors.length];
    assertTrue(hollowOutInnerNodes(f, deleted) > 20);
    assertEquals(List.of(), f.tree.checkInvariants());
    assertDrawsFollow(
        f,
        new RejectionSampler(new FindClustering.Options(BETA, 4, 0.2, 1000), 1_000_000),
        deleted);
  }

  @Test
  void metropolisHastingsStaysExactOverHollowNodes() {
    SamplerFixture f = new SamplerFixture(1_500, 8, 42);
    boolean[] deleted = new boolean[f.vectors.length];
    assertTrue(hollowOutInnerNodes(f, deleted) > 20);
    assertDrawsFollow(
        f,
        new MetropolisHastingsSampler(
            MetropolisHastingsSampler.Options.exact(
                new FindClustering.Options(BETA, 1e6, 0.0, 1_000), 30)),
        deleted);
  }
}
