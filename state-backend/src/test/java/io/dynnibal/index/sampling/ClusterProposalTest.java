package io.dynnibal.index.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.TreeVectors;
import io.dynnibal.index.VectorMath;
import io.dynnibal.index.bench.ClusteredVectors;
import io.dynnibal.index.sgtree.SgNode;
import io.dynnibal.index.sgtree.SgTree;
import java.util.Arrays;
import java.util.Comparator;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ClusterProposalTest {
  static final double BETA = MetropolisHastingsSamplerTest.BETA;
  static final FindClustering.Options COARSE = MetropolisHastingsSamplerTest.COARSE;

  /**
   * 300 clustered targets, 100 exact duplicates of some of them, then 60 deleted: a tree with
   * targets sharing a node and hollow nodes (deleted targets whose nodes had children).
   */
  private record Corpus(float[][] vectors, SgTree tree, float[] query, boolean[] live) {
    static Corpus withDuplicatesAndDeletes(long seed) {
      SplittableRandom random = new SplittableRandom(seed);
      float[][] base = TreeVectors.clustered(300, 8, seed);
      float[][] vectors = Arrays.copyOf(base, 400);
      for (int i = 300; i < 400; i++) {
        vectors[i] = base[random.nextInt(300)].clone();
      }
      int[] ids = new int[400];
      for (int i = 0; i < 400; i++) {
        ids[i] = i;
      }
      SgTree tree = SgTree.build(8, 1.3, ids, vectors, seed);
      boolean[] live = new boolean[400];
      Arrays.fill(live, true);
      for (int deleted = 0; deleted < 60; ) {
        int t = random.nextInt(400);
        if (live[t] && tree.delete(t)) {
          live[t] = false;
          deleted++;
        }
      }
      float[] query = ClusteredVectors.queryNear(base[random.nextInt(300)], 0.3, random);
      return new Corpus(vectors, tree, query, live);
    }

    double logit(int target) {
      return BETA * VectorMath.dot(query, vectors[target]);
    }
  }

  /**
   * Q by its definition, computed from the partition: cluster C weighs {@code |C| exp(beta <x,
   * rep(C)>)}, or its exact mass {@code sum exp(l_y)} when it is one of the heaviest clusters of at
   * most {@code exactInside} targets, by that weight, that together hold the first {@code
   * exactTargets}; inside, a target is drawn from the softmax when {@code |C| <= exactInside},
   * uniformly otherwise.
   */
  private static double[] definedQ(
      Partition partition, Corpus c, int exactInside, int exactTargets) {
    double[] logWeight = new double[partition.size()];
    for (int k = 0; k < partition.size(); k++) {
      logWeight[k] =
          Math.log(partition.clusters().get(k).size()) + BETA * partition.representativeScores()[k];
    }
    Integer[] heaviestFirst = new Integer[partition.size()];
    Arrays.setAll(heaviestFirst, k -> k);
    Arrays.sort(heaviestFirst, Comparator.comparingDouble(k -> -logWeight[k]));
    int scored = 0;
    for (int k : heaviestFirst) {
      int size = partition.clusters().get(k).size();
      if (scored < exactTargets && size > 0 && size <= exactInside) {
        logWeight[k] = logMass(partition.clusters().get(k), c);
        scored += size;
      }
    }
    double max = Double.NEGATIVE_INFINITY;
    for (double w : logWeight) {
      max = Math.max(max, w);
    }
    double z = 0;
    for (double w : logWeight) {
      z += Math.exp(w - max);
    }
    double logZ = max + Math.log(z);
    double[] q = new double[c.vectors.length];
    for (int k = 0; k < partition.size(); k++) {
      Cluster cluster = partition.clusters().get(k);
      int[] targets = new int[cluster.size()];
      cluster.collect(targets, new SgNode[cluster.size()]);
      double inside = cluster.size() <= exactInside ? logMass(cluster, c) : Double.NaN;
      for (int t : targets) {
        double within =
            cluster.size() <= exactInside ? c.logit(t) - inside : -Math.log(cluster.size());
        q[t] = Math.exp(logWeight[k] - logZ + within);
      }
    }
    return q;
  }

  private static double logMass(Cluster cluster, Corpus c) {
    int[] targets = new int[cluster.size()];
    cluster.collect(targets, new SgNode[cluster.size()]);
    double max = Double.NEGATIVE_INFINITY;
    for (int t : targets) {
      max = Math.max(max, c.logit(t));
    }
    double sum = 0;
    for (int t : targets) {
      sum += Math.exp(c.logit(t) - max);
    }
    return max + Math.log(sum);
  }

  /**
   * Draws from the proposal: each reports Q as defined and the target's logit, and together they
   * follow Q.
   */
  private static void assertDrawsFollow(ClusterProposal proposal, Corpus c, double[] q, long seed) {
    int draws = 60_000;
    int[] counts = new int[q.length];
    SplittableRandom random = new SplittableRandom(seed);
    for (int i = 0; i < draws; i++) {
      ClusterProposal.Draw d = proposal.draw(random);
      assertEquals(q[d.target()], Math.exp(d.logQ()), 1e-9 * Math.max(1e-3, q[d.target()]));
      assertEquals(c.logit(d.target()), d.logit(c.query, BETA), 1e-9, "the draw's logit");
      counts[d.target()]++;
    }
    double tv = Softmax.totalVariation(Softmax.empirical(counts, draws), q);
    assertTrue(tv < 0.035, "draws do not follow Q: TV " + tv);
  }

  @Test
  void qIsADistributionPositiveOnEveryLiveTarget() {
    Corpus c = Corpus.withDuplicatesAndDeletes(51);
    Partition partition = FindClustering.find(c.tree, c.query, COARSE);
    for (int exactInside : new int[] {0, 8, 400}) {
      double[] q = definedQ(partition, c, exactInside, 0);
      double total = 0;
      for (int t = 0; t < q.length; t++) {
        assertEquals(c.live[t], q[t] > 0, "target " + t + " (live " + c.live[t] + ")");
        total += q[t];
      }
      assertEquals(1, total, 1e-9);
    }
  }

  /**
   * Uniform inside every cluster (Eq. 6); exact inside clusters of at most 8; and those also
   * weighed by their exact mass (a budget that takes every one of them).
   */
  @ParameterizedTest(name = "exact inside {0}, weighed {1}")
  @CsvSource({"0, 0", "8, 0", "8, 400", "8, 40"})
  void drawsReportTheProbabilityTheyAreDrawnWith(int exactInside, int exactTargets) {
    Corpus c = Corpus.withDuplicatesAndDeletes(51);
    Partition partition = FindClustering.find(c.tree, c.query, COARSE);
    assertDrawsFollow(
        new ClusterProposal(partition, BETA, c.query, exactInside, exactTargets),
        c,
        definedQ(partition, c, exactInside, exactTargets),
        exactInside + exactTargets);
  }

  @Test
  void exactDrawsInsideClustersBringTheBareProposalCloserToTheSoftmax() {
    SamplerFixture f = new SamplerFixture(400, 8, 51);
    Partition partition = FindClustering.find(f.tree, f.query, COARSE);
    double[] softmax = Softmax.of(f.vectors, f.query, BETA);
    Corpus c = new Corpus(f.vectors, f.tree, f.query, null);
    double uniform = Softmax.totalVariation(definedQ(partition, c, 0, 0), softmax);
    double inside = Softmax.totalVariation(definedQ(partition, c, 400, 0), softmax);
    // Only the part inside clusters is fixed (0.32 -> 0.27 here); the clusters' weights are still
    // their representatives'.
    assertTrue(
        inside < uniform - 0.03,
        "TV to the softmax: uniform inside " + uniform + ", exact " + inside);
  }

  /** Every cluster small enough and weighed exactly: the proposal is the softmax itself. */
  @Test
  void everyClusterWeighedExactlyMakesTheProposalTheSoftmax() {
    SamplerFixture f = new SamplerFixture(400, 8, 51);
    Partition partition = FindClustering.find(f.tree, f.query, COARSE);
    double[] softmax = Softmax.of(f.vectors, f.query, BETA);
    ClusterProposal proposal = new ClusterProposal(partition, BETA, f.query, 400, 400);
    SplittableRandom random = new SplittableRandom(3);
    for (int i = 0; i < 2_000; i++) {
      ClusterProposal.Draw d = proposal.draw(random);
      assertEquals(softmax[d.target()], Math.exp(d.logQ()), 1e-9 + 1e-6 * softmax[d.target()]);
    }
    assertEquals(Softmax.logPartition(f.vectors, f.query, BETA), proposal.logNormaliser(), 1e-6);
  }

  /**
   * A partition found on a view of the tree scores its small clusters there; the same clusters
   * without the view are scored on their nodes: the draws are the same, bit for bit.
   */
  @ParameterizedTest(name = "exact inside {0}, weighed {1}")
  @CsvSource({"8, 0", "8, 40", "64, 400"})
  void clustersScoredOnTheSnapshotDrawAsOnTheirNodes(int exactInside, int exactTargets) {
    Corpus c = Corpus.withDuplicatesAndDeletes(53);
    Partition found = FindClustering.find(c.tree, c.query, COARSE);
    assertTrue(found.view() != null);
    Partition bare =
        new Partition(found.clusters(), found.representativeScores(), found.gammaBound());
    ClusterProposal onSnapshot =
        new ClusterProposal(found, BETA, c.query, exactInside, exactTargets);
    ClusterProposal onNodes = new ClusterProposal(bare, BETA, c.query, exactInside, exactTargets);
    assertEquals(
        Double.doubleToLongBits(onNodes.logNormaliser()),
        Double.doubleToLongBits(onSnapshot.logNormaliser()));
    SplittableRandom a = new SplittableRandom(4);
    SplittableRandom b = new SplittableRandom(4);
    for (int i = 0; i < 2_000; i++) {
      ClusterProposal.Draw x = onSnapshot.draw(a);
      ClusterProposal.Draw y = onNodes.draw(b);
      assertEquals(y.target(), x.target());
      assertSame(y.node(), x.node());
      assertEquals(Double.doubleToLongBits(y.logQ()), Double.doubleToLongBits(x.logQ()));
      assertEquals(Double.doubleToLongBits(y.logit()), Double.doubleToLongBits(x.logit()));
    }
  }

  @Test
  void aClusterCollectsTheTargetsLocateFindsInTheSameOrder() {
    Corpus c = Corpus.withDuplicatesAndDeletes(52);
    Partition partition = FindClustering.find(c.tree, c.query, COARSE);
    boolean sawOwnOnly = false;
    int collected = 0;
    for (Cluster cluster : partition.clusters()) {
      sawOwnOnly |= cluster.ownOnly();
      int[] targets = new int[cluster.size()];
      SgNode[] nodes = new SgNode[cluster.size()];
      cluster.collect(targets, nodes);
      for (int i = 0; i < cluster.size(); i++) {
        assertEquals(cluster.locate(i).target(), targets[i]);
        assertSame(cluster.locate(i).node(), nodes[i]);
      }
      collected += cluster.size();
    }
    assertTrue(sawOwnOnly, "the partition must hold a split node's own targets");
    assertEquals(340, collected, "every live target in exactly one cluster");
  }

  @Test
  void badBudgetsAreRefused() {
    SamplerFixture f = new SamplerFixture(100, 8, 51);
    Partition partition = FindClustering.find(f.tree, f.query, COARSE);
    assertThrows(
        IllegalArgumentException.class, () -> new ClusterProposal(partition, BETA, null, 8, 0));
    assertThrows(
        IllegalArgumentException.class, () -> new ClusterProposal(partition, BETA, f.query, -1, 0));
    assertThrows(
        IllegalArgumentException.class, () -> new ClusterProposal(partition, BETA, f.query, 8, -1));
    assertEquals(
        0,
        MetropolisHastingsSampler.Options.sampling(COARSE, 8, 0, 64).exactTargets(),
        "nothing is weighed exactly without exact draws inside clusters (Eq. 6)");
    assertThrows(
        IllegalArgumentException.class,
        () -> new MetropolisHastingsSampler.Options(COARSE, 2, 16, true, 4, 8, 0)); // top-k variant
  }
}
