package io.dynnibal.index.sgtree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.Int8Quantizer;
import io.dynnibal.index.TreeVectors;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SgTreeTest {
  static final int DIM = 8;

  static int[] ids(int n) {
    int[] ids = new int[n];
    for (int i = 0; i < n; i++) {
      ids[i] = i;
    }
    return ids;
  }

  @ParameterizedTest
  @ValueSource(doubles = {1.05, 1.3, 2.0})
  void bulkBuildSatisfiesEveryInvariant(double base) {
    float[][] vectors = TreeVectors.clustered(3_000, DIM, 1);
    SgTree tree = SgTree.build(DIM, base, ids(vectors.length), vectors, 7);
    assertEquals(List.of(), tree.checkInvariants());
    assertEquals(vectors.length, tree.size());
  }

  @ParameterizedTest
  @ValueSource(doubles = {1.05, 1.3, 2.0})
  void invariantsHoldAfterTenThousandRandomInsertsAndDeletes(double base) {
    SplittableRandom random = new SplittableRandom(11);
    float[][] pool = TreeVectors.clustered(6_000, DIM, 2);
    SgTree tree = SgTree.build(DIM, base, ids(1_000), java.util.Arrays.copyOf(pool, 1_000), 3);
    List<Integer> present = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      present.add(i);
    }
    int next = 1_000;
    for (int op = 0; op < 10_000; op++) {
      if (present.isEmpty() || (random.nextBoolean() && next < pool.length)) {
        tree.insert(next, pool[next]);
        present.add(next++);
      } else {
        int victim = present.remove(random.nextInt(present.size()));
        assertTrue(tree.delete(victim));
      }
      if (op % 2_500 == 0) {
        assertEquals(List.of(), tree.checkInvariants(), "after operation " + op);
      }
    }
    assertEquals(List.of(), tree.checkInvariants());
    assertEquals(present.size(), tree.size());
    for (int target : present) {
      assertTrue(tree.contains(target));
    }
  }

  @Test
  void insertingOneByOneFromEmptyKeepsInvariants() {
    float[][] vectors = TreeVectors.clustered(2_000, DIM, 3);
    SgTree tree = new SgTree(DIM, 1.3);
    for (int i = 0; i < vectors.length; i++) {
      tree.insert(i, vectors[i]);
    }
    assertEquals(List.of(), tree.checkInvariants());
    assertEquals(vectors.length, tree.size());
  }

  @Test
  void duplicatesAreKeptAsDistinctTargets() {
    float[][] vectors = TreeVectors.clustered(500, DIM, 4);
    float[][] withCopies = java.util.Arrays.copyOf(vectors, 600);
    for (int i = 500; i < 600; i++) {
      withCopies[i] = vectors[i % 7].clone();
    }
    SgTree tree = SgTree.build(DIM, 1.3, ids(600), withCopies, 5);
    tree.insert(
        600, vectors[3].clone()); // greedy insertion may place it in another node: still kept
    assertEquals(601, tree.size());
    assertEquals(List.of(), tree.checkInvariants());
    List<Neighbor> atZero =
        SgTreeSearch.exact(tree, vectors[3], 40, Similarity.EUCLIDEAN).stream()
            .filter(n -> n.score() == 0)
            .toList();
    Set<Integer> expected = new HashSet<>(List.of(3, 600));
    for (int i = 500; i < 600; i++) {
      if (i % 7 == 3) {
        expected.add(i);
      }
    }
    assertEquals(expected, new HashSet<>(atZero.stream().map(Neighbor::target).toList()));
    assertEquals(
        tree.nodeOf(3), tree.nodeOf(507), "a bulk build groups equal vectors into one node");
  }

  @Test
  void deletingTheRootAndAnInnerNodeKeepsEveryOtherTarget() {
    float[][] vectors = TreeVectors.clustered(1_500, DIM, 6);
    SgTree tree = SgTree.build(DIM, 1.3, ids(vectors.length), vectors, 9);
    SgNode inner = null;
    for (int i = 0; i < tree.root().childCount() && inner == null; i++) {
      if (tree.root().child(i).childCount() > 0 && tree.root().child(i).ownTargetCount() == 1) {
        inner = tree.root().child(i);
      }
    }
    assertNotNull(inner, "no inner node to delete");
    int innerTarget = inner.ownTarget(0);
    assertTrue(tree.delete(innerTarget));
    int rootTarget = tree.root().ownTarget(0);
    assertTrue(tree.delete(rootTarget));
    assertFalse(tree.contains(rootTarget));
    assertFalse(tree.contains(innerTarget));
    assertFalse(tree.delete(rootTarget));
    assertEquals(vectors.length - 2, tree.size());
    assertEquals(List.of(), tree.checkInvariants());
    Set<Integer> left = new HashSet<>();
    java.util.ArrayDeque<SgNode> stack = new java.util.ArrayDeque<>(List.of(tree.root()));
    while (!stack.isEmpty()) {
      SgNode node = stack.pop();
      for (int i = 0; i < node.ownTargetCount(); i++) {
        left.add(node.ownTarget(i));
      }
      for (int i = 0; i < node.childCount(); i++) {
        stack.push(node.child(i));
      }
    }
    assertEquals(vectors.length - 2, left.size());
    assertFalse(left.contains(rootTarget));
    assertFalse(left.contains(innerTarget));
  }

  /**
   * The tree holds a vector as 8-bit codes: what an insert or a bulk build gives back is the vector
   * snapped, and a vector that snaps to a node's point joins that node.
   */
  @Test
  void theTreeHoldsEachVectorSnapped() {
    float[][] raw = io.dynnibal.index.ClusteredVectors.generate(400, DIM, 12);
    SgTree built = SgTree.build(DIM, 1.3, ids(raw.length), raw, 13);
    SgTree inserted = new SgTree(DIM, 1.3);
    for (int i = 0; i < raw.length; i++) {
      inserted.insert(i, raw[i]);
    }
    for (int i = 0; i < raw.length; i++) {
      assertArrayEquals(Int8Quantizer.snap(raw[i]), built.nodeOf(i).vector());
      assertArrayEquals(Int8Quantizer.snap(raw[i]), inserted.nodeOf(i).vector());
    }
    // A quarter step from the snapped point, on its smallest coordinate: the same codes.
    float[] nearby = Int8Quantizer.snap(raw[5]);
    int smallest = 0;
    for (int j = 1; j < DIM; j++) {
      smallest = Math.abs(nearby[j]) < Math.abs(nearby[smallest]) ? j : smallest;
    }
    nearby[smallest] += Int8Quantizer.scaleFor(nearby) / 4;
    inserted.insert(raw.length, nearby);
    assertTrue(inserted.nodeOf(raw.length) == inserted.nodeOf(5), "joins the node of target 5");
    assertEquals(List.of(), inserted.checkInvariants());
    assertEquals(List.of(), built.checkInvariants());
  }

  @Test
  void badInputIsRejectedWithAReason() {
    SgTree tree = new SgTree(DIM, 1.3);
    float[] nan = new float[DIM];
    nan[2] = Float.NaN;
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> tree.insert(1, nan));
    assertTrue(e.getMessage().contains("non-finite"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> tree.insert(1, new float[DIM + 1]));
    tree.insert(1, new float[DIM]);
    assertThrows(IllegalArgumentException.class, () -> tree.insert(1, new float[DIM]));
    assertThrows(IllegalArgumentException.class, () -> new SgTree(DIM, 1.0));
    assertNotNull(tree.root());
  }

  @Test
  void checkInvariantsReportsABrokenCovering() {
    float[][] vectors = TreeVectors.clustered(300, DIM, 8);
    SgTree tree = SgTree.build(DIM, 1.3, ids(vectors.length), vectors, 1);
    SgNode child = tree.root().child(0);
    child.level -= 3; // now the parent is too far to cover it at its level
    List<String> violations = tree.checkInvariants();
    assertTrue(violations.stream().anyMatch(v -> v.contains("covering")), violations.toString());
  }

  /** A node with children whose one target is the only one there, and its descendants' targets. */
  private static SgNode innerNodeWithOneTarget(SgTree tree) {
    java.util.Deque<SgNode> stack = new java.util.ArrayDeque<>(List.of(tree.root()));
    SgNode best = null;
    while (!stack.isEmpty()) {
      SgNode n = stack.pop();
      if (n != tree.root() && n.childCount() > 0 && n.ownTargetCount() == 1) {
        if (best == null || n.size() > best.size()) {
          best = n;
        }
      }
      for (int i = 0; i < n.childCount(); i++) {
        stack.push(n.child(i));
      }
    }
    return best;
  }

  private static List<Integer> targetsBelow(SgNode node) {
    List<Integer> out = new ArrayList<>();
    java.util.Deque<SgNode> stack = new java.util.ArrayDeque<>();
    for (int i = 0; i < node.childCount(); i++) {
      stack.push(node.child(i));
    }
    while (!stack.isEmpty()) {
      SgNode n = stack.pop();
      for (int i = 0; i < n.ownTargetCount(); i++) {
        out.add(n.ownTarget(i));
      }
      for (int i = 0; i < n.childCount(); i++) {
        stack.push(n.child(i));
      }
    }
    return out;
  }

  /**
   * Deleting the last target of a node with children moves nothing below it (the node stays as
   * their reference point, hollow), and exact search over the rest still equals brute force.
   */
  @Test
  void deletingAnInnerNodesLastTargetMovesNothingBelowIt() {
    float[][] vectors = TreeVectors.clustered(3_000, DIM, 5);
    SgTree tree = new SgTree(DIM, 1.3);
    for (int i = 0; i < vectors.length; i++) {
      tree.insert(i, vectors[i]);
    }
    SgNode inner = innerNodeWithOneTarget(tree);
    assertNotNull(inner, "no inner node with a single target");
    int victim = inner.ownTarget(0);
    List<Integer> below = targetsBelow(inner);
    java.util.Map<Integer, SgNode> nodeBefore = new java.util.HashMap<>();
    for (int t : below) {
      nodeBefore.put(t, tree.nodeOf(t));
    }
    assertTrue(tree.delete(victim));
    assertFalse(tree.contains(victim));
    assertEquals(0, inner.ownTargetCount());
    assertEquals(below.size(), inner.size());
    for (int t : below) {
      assertTrue(tree.nodeOf(t) == nodeBefore.get(t), "target " + t + " moved");
    }
    assertEquals(List.of(), tree.checkInvariants());
    assertEquals(vectors.length - 1, tree.size());
    float[] query = vectors[below.get(0)];
    List<Neighbor> found = SgTreeSearch.exact(tree, query, 10, Similarity.INNER_PRODUCT);
    List<Integer> brute = new ArrayList<>();
    for (int i = 0; i < vectors.length; i++) {
      if (i != victim) {
        brute.add(i);
      }
    }
    brute.sort(
        java.util.Comparator.comparingDouble(
                (Integer i) -> -io.dynnibal.index.VectorMath.dot(query, vectors[i]))
            .thenComparing(i -> i));
    for (int r = 0; r < 10; r++) {
      assertEquals(
          io.dynnibal.index.VectorMath.dot(query, vectors[brute.get(r)]),
          found.get(r).score(),
          1e-9,
          "rank " + r);
    }
  }

  /** A hollow node leaves the tree with the last target below it. */
  @Test
  void aHollowNodeLeavesWithItsLastDescendant() {
    float[][] vectors = TreeVectors.clustered(2_000, DIM, 6);
    SgTree tree = new SgTree(DIM, 1.3);
    for (int i = 0; i < vectors.length; i++) {
      tree.insert(i, vectors[i]);
    }
    SgNode inner = innerNodeWithOneTarget(tree);
    SgNode parent = inner.parent();
    List<Integer> below = targetsBelow(inner);
    tree.delete(inner.ownTarget(0));
    for (int t : below) {
      assertTrue(tree.delete(t));
    }
    for (int i = 0; i < parent.childCount(); i++) {
      assertTrue(parent.child(i) != inner, "the hollow node is still a child");
    }
    assertEquals(List.of(), tree.checkInvariants());
    assertEquals(vectors.length - 1 - below.size(), tree.size());
  }
}
