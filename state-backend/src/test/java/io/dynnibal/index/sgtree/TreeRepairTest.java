package io.dynnibal.index.sgtree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.ClusteredVectors;
import io.dynnibal.index.Int8Quantizer;
import io.dynnibal.index.TreeVectors;
import io.dynnibal.index.nystrom.CacheMap;
import io.dynnibal.index.sampling.FindClustering;
import io.dynnibal.index.sampling.MetropolisHastingsSampler;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

class TreeRepairTest {
  static final int DIM = 16;

  /** A near-identity map, as a re-encoding after a few training steps produces. */
  static CacheMap drift(double strength, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    float[] m = new float[DIM * DIM];
    for (int i = 0; i < DIM; i++) {
      for (int j = 0; j < DIM; j++) {
        m[i * DIM + j] =
            (float) ((i == j ? 1 : 0) + strength * (random.nextDouble() - 0.5) / Math.sqrt(DIM));
      }
    }
    return new CacheMap(DIM, m);
  }

  static SgTree tree(int n, long seed) {
    return SgTree.build(DIM, 1.3, SgTreeTest.ids(n), TreeVectors.clustered(n, DIM, seed), seed);
  }

  static double move(SgTree tree, CacheMap map) {
    float[] scratch = new float[DIM];
    return tree.moveVectors(v -> map.applyInPlace(v, scratch));
  }

  /** Where {@link #move} puts a vector the tree holds: mapped, then snapped again. */
  static float[] moved(float[] vector, CacheMap map) {
    float[] v = vector.clone();
    map.applyInPlace(v, new float[DIM]);
    return Int8Quantizer.snap(v);
  }

  @ParameterizedTest
  @CsvSource({"EXACT, 0.05", "EXACT, 0.5", "BOUNDED, 0.05", "BOUNDED, 0.5"})
  void invariantsHoldAfterRepairAndNoTargetIsLost(TreeRepair.Mode mode, double strength) {
    SgTree tree = tree(3_000, 1);
    double drift = move(tree, drift(strength, 2));
    assertTrue(drift > 0);
    TreeRepair.Report report = TreeRepair.repair(tree, drift, mode, 3);
    assertEquals(List.of(), tree.checkInvariants());
    assertEquals(3_000, tree.size());
    for (int t = 0; t < 3_000; t++) {
      assertTrue(tree.contains(t));
    }
    assertTrue(report.rebuiltFraction() > 0 && report.rebuiltFraction() <= 1, report.toString());
  }

  @Test
  void aLargerDriftRebuildsMore() {
    SgTree small = tree(3_000, 4);
    TreeRepair.Report a =
        TreeRepair.repair(small, move(small, drift(0.02, 5)), TreeRepair.Mode.EXACT, 6);
    SgTree large = tree(3_000, 4);
    TreeRepair.Report b =
        TreeRepair.repair(large, move(large, drift(0.8, 5)), TreeRepair.Mode.EXACT, 6);
    assertTrue(a.targetsMoved() < b.targetsMoved(), a + " vs " + b);
    assertTrue(a.rebuiltFraction() < 0.1, "a small drift rebuilt " + a);
  }

  @Test
  void aRebuildLevelAboveTheRootsChildrenRebuildsEverything() {
    SgTree tree = tree(2_000, 7);
    int level = tree.root().level();
    int subtreeRoots =
        tree.root().ownTargetCount(); // the root and its children stay; all below them moves
    for (int i = 0; i < tree.root().childCount(); i++) {
      subtreeRoots += tree.root().child(i).ownTargetCount();
    }
    TreeRepair.Report report =
        TreeRepair.repairAtLevel(tree, level, move(tree, drift(0.01, 8)), TreeRepair.Mode.EXACT, 9);
    assertTrue(report.subtreesRebuilt() >= 1, report.toString());
    assertTrue(report.targetsMoved() >= tree.size() - subtreeRoots, report.toString());
    assertEquals(List.of(), tree.checkInvariants());
  }

  /**
   * The streaming job's life: many updates, with targets coming and going between them, in the fast
   * mode.
   */
  @Test
  void repeatedMoveAndRepairCyclesWithInsertsAndDeletesStaySound() {
    SgTree tree = tree(2_000, 20);
    float[][] fresh = TreeVectors.clustered(500, DIM, 21);
    SplittableRandom random = new SplittableRandom(22);
    int next = 0;
    for (int cycle = 0; cycle < 5; cycle++) {
      for (int i = 0; i < 100; i++) {
        tree.delete(random.nextInt(2_000));
        tree.insert(10_000 + next, fresh[next++].clone());
      }
      TreeRepair.repair(tree, move(tree, drift(0.2, 30 + cycle)), TreeRepair.Mode.BOUNDED, cycle);
      assertEquals(List.of(), tree.checkInvariants(), "after cycle " + cycle);
    }
  }

  /**
   * Repair over a tree whose inner nodes were hollowed out (their targets deleted while they had
   * children, as exact re-encoding does target by target): every target left is found where it is,
   * exact search equals brute force on the moved vectors, and the tree is sound.
   */
  @ParameterizedTest
  @EnumSource(TreeRepair.Mode.class)
  void repairOverHollowNodesLosesNoTarget(TreeRepair.Mode mode) {
    float[][] vectors = TreeVectors.clustered(2_000, DIM, 40);
    SgTree tree = new SgTree(DIM, 1.3);
    for (int i = 0; i < vectors.length; i++) {
      tree.insert(i, vectors[i]);
    }
    java.util.Set<Integer> deleted = new java.util.HashSet<>();
    SplittableRandom random = new SplittableRandom(41);
    for (SgNode node : tree.nodes()) {
      // Most inner nodes go hollow, some with a single child left; a few leaves go too.
      if (node != tree.root()
          && node.ownTargetCount() == 1
          && (node.childCount() > 0 || random.nextInt(10) == 0)) {
        deleted.add(node.ownTarget(0));
      }
    }
    for (int t : deleted) {
      assertTrue(tree.delete(t));
    }
    assertEquals(List.of(), tree.checkInvariants());
    CacheMap map = drift(0.4, 42);
    TreeRepair.repair(tree, move(tree, map), mode, 43);
    assertEquals(List.of(), tree.checkInvariants());
    assertEquals(vectors.length - deleted.size(), tree.size());
    float[][] kept = new float[vectors.length - deleted.size()][];
    int k = 0;
    for (int i = 0; i < vectors.length; i++) {
      if (!deleted.contains(i)) {
        assertTrue(tree.contains(i));
        kept[k] = moved(vectors[i], map);
        assertArrayEquals(kept[k++], tree.nodeOf(i).vector(), "target " + i + " at its own vector");
      }
    }
    assertSearchEqualsBruteForce(tree, kept, random);
  }

  /**
   * The drift {@code moveVectors} reports bounds how far each vector moved as the tree holds it,
   * snapping included: repair trusts it to find everything the move can have broken.
   */
  @org.junit.jupiter.api.Test
  void theReportedDriftBoundsEveryMoveOfTheHeldVectors() {
    float[][] vectors = TreeVectors.clustered(1_000, DIM, 16);
    SgTree tree = SgTree.build(DIM, 1.3, SgTreeTest.ids(vectors.length), vectors, 17);
    CacheMap map = drift(0.05, 18);
    double drift = move(tree, map);
    double largest = 0;
    for (int i = 0; i < vectors.length; i++) {
      float[] now = tree.nodeOf(i).vector();
      assertArrayEquals(moved(vectors[i], map), now);
      largest = Math.max(largest, io.dynnibal.index.VectorMath.distance(vectors[i], now));
    }
    assertEquals(largest, drift, 1e-12);
  }

  @ParameterizedTest
  @EnumSource(TreeRepair.Mode.class)
  void exactSearchAfterRepairEqualsBruteForceOnTheMovedVectors(TreeRepair.Mode mode) {
    float[][] vectors = TreeVectors.clustered(2_000, DIM, 10);
    SgTree tree = SgTree.build(DIM, 1.3, SgTreeTest.ids(vectors.length), vectors, 11);
    CacheMap map = drift(0.3, 12);
    TreeRepair.repair(tree, move(tree, map), mode, 13);
    float[][] moved = new float[vectors.length][];
    for (int i = 0; i < vectors.length; i++) {
      moved[i] = moved(vectors[i], map);
    }
    assertSearchEqualsBruteForce(tree, moved, new SplittableRandom(14));
  }

  /** Exact search over the tree returns brute force's top 10 over {@code vectors}, 20 queries. */
  private static void assertSearchEqualsBruteForce(
      SgTree tree, float[][] vectors, SplittableRandom random) {
    for (int q = 0; q < 20; q++) {
      float[] query =
          ClusteredVectors.queryNear(vectors[random.nextInt(vectors.length)], 0.4, random);
      assertEquals(
          SgTreeSearchTest.bruteForce(vectors, query, 10, Similarity.INNER_PRODUCT).stream()
              .map(Neighbor::score)
              .toList(),
          SgTreeSearch.exact(tree, query, 10, Similarity.INNER_PRODUCT).stream()
              .map(Neighbor::score)
              .toList());
    }
  }

  /**
   * The repaired tree samples as well as a tree built from scratch on the moved vectors (overlap
   * with exact top-k).
   */
  @Test
  void samplerQualityAfterRepairMatchesAFullRebuild() {
    int n = 4_000;
    float[][] vectors = TreeVectors.clustered(n, DIM, 15);
    SgTree repaired = SgTree.build(DIM, 1.3, SgTreeTest.ids(n), vectors, 16);
    TreeRepair.repair(repaired, move(repaired, drift(0.3, 17)), TreeRepair.Mode.BOUNDED, 18);
    SgTree rebuilt =
        SgTree.build(DIM, 1.3, SgTreeTest.ids(n), vectors, 16); // `vectors` were moved in place
    MetropolisHastingsSampler sampler =
        new MetropolisHastingsSampler(
            MetropolisHastingsSampler.Options.practical(
                new FindClustering.Options(20, 1e6, 0.3, 100), 8));
    SplittableRandom random = new SplittableRandom(19);
    double overlapRepaired = 0;
    double overlapRebuilt = 0;
    int queries = 60;
    for (int q = 0; q < queries; q++) {
      float[] query = ClusteredVectors.queryNear(vectors[random.nextInt(n)], 0.3, random);
      Set<Integer> top = new HashSet<>();
      SgTreeSearchTest.bruteForce(vectors, query, 32, Similarity.INNER_PRODUCT)
          .forEach(x -> top.add(x.target()));
      overlapRepaired +=
          overlap(top, sampler.sample(repaired, query, 32, new SplittableRandom(q)).targets());
      overlapRebuilt +=
          overlap(top, sampler.sample(rebuilt, query, 32, new SplittableRandom(q)).targets());
    }
    overlapRepaired /= queries;
    overlapRebuilt /= queries;
    assertTrue(
        Math.abs(overlapRepaired - overlapRebuilt) < 0.05,
        "overlap after repair " + overlapRepaired + " vs after rebuild " + overlapRebuilt);
    assertTrue(
        overlapRebuilt > 0.5, "the comparison is vacuous: rebuilt overlap " + overlapRebuilt);
  }

  private static double overlap(Set<Integer> top, int[] sampled) {
    return Arrays.stream(sampled).filter(top::contains).count() / (double) top.size();
  }
}
