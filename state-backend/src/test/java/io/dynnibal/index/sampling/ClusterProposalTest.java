package io.dynnibal.index.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.ClusteredVectors;
import io.dynnibal.index.TreeVectors;
import io.dynnibal.index.VectorMath;
import io.dynnibal.index.sgtree.SgTree;
import io.dynnibal.index.sgtree.SgTreeSnapshot;
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
   * {@code n} clustered targets, {@code n / 3} exact duplicates of some of them, then {@code n / 5}
   * deleted: a tree with targets sharing a node and hollow nodes (deleted targets whose nodes had
   * children).
   */
  private record Corpus(float[][] vectors, SgTree tree, float[] query, boolean[] live) {
    static Corpus withDuplicatesAndDeletes(long seed) {
      return withDuplicatesAndDeletes(seed, 300);
    }

    static Corpus withDuplicatesAndDeletes(long seed, int n) {
      SplittableRandom random = new SplittableRandom(seed);
      float[][] base = TreeVectors.clustered(n, 8, seed);
      int total = n + n / 3;
      float[][] vectors = Arrays.copyOf(base, total);
      for (int i = n; i < total; i++) {
        vectors[i] = base[random.nextInt(n)].clone();
      }
      int[] ids = new int[total];
      for (int i = 0; i < total; i++) {
        ids[i] = i;
      }
      SgTree tree = SgTree.build(8, 1.3, ids, vectors, seed);
      boolean[] live = new boolean[total];
      Arrays.fill(live, true);
      for (int deleted = 0; deleted < n / 5; ) {
        int t = random.nextInt(total);
        if (live[t] && tree.delete(t)) {
          live[t] = false;
          deleted++;
        }
      }
      float[] query = ClusteredVectors.queryNear(base[random.nextInt(n)], 0.3, random);
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
      int[] targets = targetsOf(cluster);
      double inside = cluster.size() <= exactInside ? logMass(cluster, c) : Double.NaN;
      for (int t : targets) {
        double within =
            cluster.size() <= exactInside ? c.logit(t) - inside : -Math.log(cluster.size());
        q[t] = Math.exp(logWeight[k] - logZ + within);
      }
    }
    return q;
  }

  private static int[] targetsOf(Cluster cluster) {
    int[] targets = new int[cluster.size()];
    for (int i = 0; i < targets.length; i++) {
      targets[i] = cluster.locate(i).target();
    }
    return targets;
  }

  private static double logMass(Cluster cluster, Corpus c) {
    int[] targets = targetsOf(cluster);
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
   * The first searches of a tree walk its nodes, later ones read its snapshot: proposals on either
   * draw the same targets with the same probabilities and logits, bit for bit.
   */
  @ParameterizedTest(name = "exact inside {0}, weighed {1}")
  @CsvSource({"8, 0", "8, 40", "64, 400"})
  void clustersScoredOnTheSnapshotDrawAsOnAWalkOfTheNodes(int exactInside, int exactTargets) {
    Corpus f = Corpus.withDuplicatesAndDeletes(53, 3_000);
    Partition walked = FindClustering.find(f.tree, f.query, COARSE);
    while (!(f.tree.searchView() instanceof SgTreeSnapshot)) {
      // the tree goes unchanged for a search per 512 targets before it takes a snapshot
    }
    Partition read = FindClustering.find(f.tree, f.query, COARSE);
    assertFalse(walked.view() instanceof SgTreeSnapshot);
    assertTrue(read.view() instanceof SgTreeSnapshot);
    ClusterProposal onWalk = new ClusterProposal(walked, BETA, f.query, exactInside, exactTargets);
    ClusterProposal onSnapshot =
        new ClusterProposal(read, BETA, f.query, exactInside, exactTargets);
    assertEquals(
        Double.doubleToLongBits(onWalk.logNormaliser()),
        Double.doubleToLongBits(onSnapshot.logNormaliser()));
    SplittableRandom a = new SplittableRandom(4);
    SplittableRandom b = new SplittableRandom(4);
    for (int i = 0; i < 2_000; i++) {
      ClusterProposal.Draw x = onSnapshot.draw(a);
      ClusterProposal.Draw y = onWalk.draw(b);
      assertEquals(y.target(), x.target());
      assertSame(y.node(), x.node());
      assertEquals(Double.doubleToLongBits(y.logQ()), Double.doubleToLongBits(x.logQ()));
      assertEquals(Double.doubleToLongBits(y.logit()), Double.doubleToLongBits(x.logit()));
    }
  }

  /** Drawing exactly inside clusters reads the tree through the partition's view. */
  @Test
  void exactDrawsInsideNeedThePartitionsView() {
    SamplerFixture f = new SamplerFixture(100, 8, 51);
    Partition found = FindClustering.find(f.tree, f.query, COARSE);
    Partition bare =
        new Partition(found.clusters(), found.representativeScores(), found.gammaBound());
    assertThrows(
        IllegalArgumentException.class, () -> new ClusterProposal(bare, BETA, f.query, 8, 0));
    new ClusterProposal(bare, BETA, f.query, 0, 0); // Eq. 6 reads the blocks' nodes
  }

  @Test
  void aPartitionHoldsEveryLiveTargetOnce() {
    Corpus c = Corpus.withDuplicatesAndDeletes(52);
    Partition partition = FindClustering.find(c.tree, c.query, COARSE);
    boolean sawOwnOnly = false;
    boolean[] seen = new boolean[c.vectors.length];
    for (Cluster cluster : partition.clusters()) {
      sawOwnOnly |= cluster.ownOnly();
      for (int t : targetsOf(cluster)) {
        assertTrue(c.live[t] && !seen[t], "target " + t);
        seen[t] = true;
      }
    }
    assertTrue(sawOwnOnly, "the partition must hold a split node's own targets");
    for (int t = 0; t < seen.length; t++) {
      assertEquals(c.live[t], seen[t], "target " + t);
    }
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
