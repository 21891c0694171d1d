package io.dynnibal.index.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.VectorMath;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class FindClusteringTest {

  @ParameterizedTest
  @CsvSource({"20, 1.5, 0.0, 100000", "20, 1000, 0.3, 100", "5, 2, 0.1, 7", "20, 1.01, 0.0, 0"})
  void thePartitionCoversEveryTargetExactlyOnce(
      double beta, double gamma, double deepest, int cap) {
    SamplerFixture f = new SamplerFixture(2_000, 8, 31);
    Partition partition =
        FindClustering.find(f.tree, f.query, new FindClustering.Options(beta, gamma, deepest, cap));
    int[] times = new int[f.vectors.length];
    for (Cluster c : partition.clusters()) {
      for (int i = 0; i < c.size(); i++) {
        times[c.locate(i).target()]++;
      }
    }
    for (int t = 0; t < times.length; t++) {
      assertEquals(1, times[t], "target " + t);
    }
    int rootSplit = 1 + f.tree.root().childCount(); // the root is split outside the budget
    assertTrue(
        partition.size() <= rootSplit + cap, "budget " + cap + " exceeded: " + partition.size());
  }

  @Test
  void everyTargetsRatioToTheProposalIsWithinTheReportedGamma() {
    SamplerFixture f = new SamplerFixture(2_000, 8, 32);
    double beta = 10;
    Partition partition =
        FindClustering.find(f.tree, f.query, new FindClustering.Options(beta, 4, 0.2, 100_000));
    assertTrue(partition.gammaBound() <= 4 + 1e-9, "bound " + partition.gammaBound());
    double[] p = Softmax.of(f.vectors, f.query, beta);
    double zHat = 0;
    for (int i = 0; i < partition.size(); i++) {
      zHat +=
          partition.clusters().get(i).size() * Math.exp(beta * partition.representativeScores()[i]);
    }
    double worst = 0;
    for (int i = 0; i < partition.size(); i++) {
      Cluster c = partition.clusters().get(i);
      double q = Math.exp(beta * partition.representativeScores()[i]) / zHat;
      for (int j = 0; j < c.size(); j++) {
        worst = Math.max(worst, p[c.locate(j).target()] / q);
      }
    }
    assertTrue(worst <= partition.gammaBound() * (1 + 1e-9), "P/Q reached " + worst);
  }

  /**
   * Alg. 2's postcondition: no cluster wider than b^m may still hold a target within b^m of the
   * query.
   */
  @Test
  void noClusterThatMayHoldANearTargetIsLeftWide() {
    SamplerFixture f = new SamplerFixture(2_000, 8, 33);
    double deepest = 0.25;
    Partition partition =
        FindClustering.find(f.tree, f.query, new FindClustering.Options(20, 1e6, deepest, 100_000));
    int refined = 0;
    for (Cluster c : partition.clusters()) {
      double lowerBound = VectorMath.distance(f.query, c.node().vector()) - c.radius();
      if (lowerBound <= deepest) {
        assertTrue(
            c.radius() <= deepest, "a near cluster of radius " + c.radius() + " was not split");
        refined++;
      }
    }
    assertTrue(refined > 0, "no cluster near the query at all: the check is vacuous");
  }

  @Test
  void levelsTranslateToTheRadiiOfProposition2() {
    FindClustering.Options o = FindClustering.Options.atLevels(20, 1.3, -2, -5, 100);
    assertEquals(Math.pow(1.3, -2), Math.log(o.gamma()) / (2 * 20), 1e-12);
    assertEquals(Math.pow(1.3, -5), o.deepestRadius(), 1e-12);
  }
}
