package io.dynnibal.index.sampling;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.ClusteredVectors;
import io.dynnibal.index.VectorMath;
import io.dynnibal.index.sgtree.SgNode;
import io.dynnibal.index.sgtree.SgTree;
import io.dynnibal.index.sgtree.SgTreeSnapshot;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
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

  /**
   * Under a frame (the tree's coordinates are not the query's), nearness is measured from where the
   * query lies among the tree's vectors, not from the vector that scores them: with the tree scaled
   * by 3, the scoring vector {@code F^T q} is 9 times the position {@code F^+ q}, and the clusters
   * near the position are the ones to refine.
   */
  @Test
  void theRefinementFollowsTheQuerysPositionNotItsScoringVector() {
    SamplerFixture f = new SamplerFixture(2_000, 8, 35);
    float[] position = f.vectors[7]; // a target itself: some cluster is near it
    float[] scoring = new float[position.length];
    for (int i = 0; i < position.length; i++) {
      scoring[i] = 9 * position[i];
    }
    double deepest = 0.25;
    Partition partition =
        FindClustering.find(
            f.tree, scoring, position, new FindClustering.Options(1, 1e300, deepest, 100_000));
    int refined = 0;
    for (Cluster c : partition.clusters()) {
      double lowerBound = VectorMath.distance(position, c.node().vector()) - c.radius();
      if (lowerBound <= deepest) {
        assertTrue(
            c.radius() <= deepest, "a near cluster of radius " + c.radius() + " was not split");
        refined++;
      }
    }
    assertTrue(refined > 0, "no cluster near the position at all: the check is vacuous");
    double[] scores = partition.representativeScores();
    for (int i = 0; i < partition.size(); i++) {
      assertEquals(
          VectorMath.dot(scoring, partition.clusters().get(i).node().vector()), scores[i], 1e-4);
    }
  }

  /**
   * The first searches of a tree walk its nodes, later ones read its snapshot ({@link
   * SgTree#searchView()}): the same partition either way, bit for bit.
   */
  @Test
  void aWalkOfTheNodesAndTheSnapshotGiveTheSamePartition() {
    SamplerFixture f = new SamplerFixture(3_000, 8, 36);
    FindClustering.Options options = new FindClustering.Options(20, 1e6, 0.3, 150);
    SplittableRandom random = new SplittableRandom(37);
    float[][] queries = new float[5][];
    for (int q = 0; q < queries.length; q++) {
      queries[q] = ClusteredVectors.queryNear(f.vectors[random.nextInt(3_000)], 0.3, random);
    }
    Partition[] walked = new Partition[queries.length];
    for (int q = 0; q < queries.length; q++) {
      walked[q] = FindClustering.find(f.tree, queries[q], options); // 3,000 / 512: 5 walks
      assertFalse(walked[q].view() instanceof SgTreeSnapshot);
    }
    for (int q = 0; q < queries.length; q++) {
      Partition read = FindClustering.find(f.tree, queries[q], options);
      assertTrue(read.view() instanceof SgTreeSnapshot);
      assertEquals(walked[q].clusters(), read.clusters()); // the same nodes, split or whole
      assertArrayEquals(walked[q].representativeScores(), read.representativeScores());
      assertArrayEquals(walked[q].sizes(), read.sizes());
      assertEquals(walked[q].gammaBound(), read.gammaBound());
      assertTrue(read.size() > 150, "the budget is spent: " + read.size());
    }
  }

  @Test
  void levelsTranslateToTheRadiiOfProposition2() {
    FindClustering.Options o = FindClustering.Options.atLevels(20, 1.3, -2, -5, 100);
    assertEquals(Math.pow(1.3, -2), Math.log(o.gamma()) / (2 * 20), 1e-12);
    assertEquals(Math.pow(1.3, -5), o.deepestRadius(), 1e-12);
  }

  /**
   * Closing the subtrees that cannot be split at once, and sifting only the others through a heap
   * of indexes, gives the partition a {@link PriorityQueue} of all candidates gives (ties of
   * priority broken by the order of the pushes in both), with the same scores; only the order of
   * the blocks differs.
   */
  @ParameterizedTest
  @CsvSource({"20, 1.5, 0.0, 300", "20, 1000, 0.3, 100", "5, 2, 0.9, 7", "20, 1.01, 0.5, 0"})
  void thePartitionIsTheOneAPriorityQueueOfCandidatesGives(
      double beta, double gamma, double deepest, int cap) {
    SamplerFixture f = new SamplerFixture(2_000, 8, 34);
    float[][] doubled = new float[4_000][];
    int[] ids = new int[doubled.length];
    for (int i = 0; i < doubled.length; i++) {
      doubled[i] = f.vectors[i / 2];
      ids[i] = i;
    }
    SgTree withTies = SgTree.build(8, 1.3, ids, doubled, 34);
    FindClustering.Options options = new FindClustering.Options(beta, gamma, deepest, cap);
    SplittableRandom random = new SplittableRandom(34);
    for (SgTree tree : List.of(f.tree, withTies)) {
      for (int q = 0; q < 20; q++) {
        // The zero query scores every subtree 0: subtrees of equal size tie on priority.
        float[] query =
            q == 0
                ? new float[8]
                : ClusteredVectors.queryNear(
                    f.vectors[random.nextInt(f.vectors.length)], 0.3, random);
        Partition actual = FindClustering.find(tree, query, options);
        Partition expected = ReferenceFindClustering.find(tree, query, options);
        assertEquals(expected.size(), actual.size());
        assertEquals(scoresByCluster(expected), scoresByCluster(actual));
        assertEquals(expected.gammaBound(), actual.gammaBound());
      }
    }
  }

  private static Map<Cluster, Double> scoresByCluster(Partition partition) {
    Map<Cluster, Double> scores = new HashMap<>();
    for (int c = 0; c < partition.size(); c++) {
      scores.put(partition.clusters().get(c), partition.representativeScores()[c]);
    }
    return scores;
  }

  /**
   * FindClustering as it was first written: a {@link PriorityQueue} of candidate records, every
   * subtree through it.
   */
  private static final class ReferenceFindClustering {
    private record Candidate(
        SgNode node, boolean ownOnly, double score, double distance, double priority, long seq)
        implements Comparable<Candidate> {
      @Override
      public int compareTo(Candidate other) {
        int byPriority = Double.compare(other.priority, priority);
        return byPriority != 0 ? byPriority : Long.compare(seq, other.seq);
      }
    }

    static Partition find(SgTree tree, float[] query, FindClustering.Options options) {
      SgNode root = tree.root();
      double queryNorm = VectorMath.norm(query);
      double startRadius = Math.log(options.gamma()) / (2 * options.beta() * queryNorm);
      long cap = root.childCount() + 1L + options.maxClusters();
      List<Candidate> done = new ArrayList<>();
      PriorityQueue<Candidate> open = new PriorityQueue<>();
      double querySquaredNorm = queryNorm * queryNorm;
      long pushes = 0;
      open.add(candidate(root, query, queryNorm, querySquaredNorm, options.beta(), pushes++));
      int total = 1;
      while (!open.isEmpty()) {
        Candidate c = open.poll();
        SgNode node = c.node();
        boolean wide = node.maxDistance() > startRadius;
        boolean near =
            node.maxDistance() > options.deepestRadius()
                && c.distance() - node.maxDistance() <= options.deepestRadius();
        boolean affordable = node == root || (long) total + node.childCount() <= cap;
        if (node.childCount() == 0 || !(wide || near) || !affordable) {
          done.add(c);
          continue;
        }
        done.add(new Candidate(node, true, c.score(), c.distance(), c.priority(), c.seq()));
        for (int i = 0; i < node.childCount(); i++) {
          open.add(
              candidate(
                  node.child(i), query, queryNorm, querySquaredNorm, options.beta(), pushes++));
        }
        total += node.childCount();
      }
      List<Cluster> clusters = new ArrayList<>();
      double[] scores = new double[done.size()];
      double widestRadius = 0;
      for (Candidate c : done) {
        Cluster cluster = new Cluster(c.node(), c.ownOnly());
        scores[clusters.size()] = c.score();
        clusters.add(cluster);
        widestRadius = Math.max(widestRadius, cluster.radius());
      }
      return new Partition(
          clusters, scores, Math.exp(2 * options.beta() * queryNorm * widestRadius));
    }

    private static Candidate candidate(
        SgNode node,
        float[] query,
        double queryNorm,
        double querySquaredNorm,
        double beta,
        long seq) {
      double score = VectorMath.dot(query, node.vector());
      double distance = VectorMath.distanceFromDot(score, querySquaredNorm, node.squaredNorm());
      double priority = Math.log(node.size()) + beta * (score + queryNorm * node.maxDistance());
      return new Candidate(node, false, score, distance, priority, seq);
    }
  }
}
