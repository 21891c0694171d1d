package io.dynnibal.index.sgtree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.TileScores;
import io.dynnibal.index.TreeVectors;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class SgTreeSnapshotTest {
  static final int DIM = 16;

  /**
   * The tree's snapshot, kept until the tree changes, and a walk of its nodes both list every node
   * once, breadth first (root first, each node's children consecutive and in the node's order),
   * with the node's size, own targets, maxd, norm and inner products bit for bit.
   */
  static void assertMirrors(SgTree tree, SplittableRandom random) {
    SgTreeSnapshot s = tree.snapshot();
    if (tree.root() == null) {
      assertNull(s);
      assertNull(tree.searchView());
      return;
    }
    assertSame(s, tree.snapshot(), "a snapshot is kept until the tree changes");
    assertEquals(tree.nodes().size(), s.nodeCount());
    assertMirrors(s, tree, random);
    assertMirrors(new NodeWalk(tree.root()), tree, random);
  }

  static void assertMirrors(TreeView view, SgTree tree, SplittableRandom random) {
    float[] x = TreeVectors.clustered(1, DIM, random.nextLong())[0];
    List<SgNode> breadthFirst = tree.nodes();
    Set<SgNode> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    for (int i = 0; i < breadthFirst.size(); i++) {
      SgNode node = view.node(i);
      assertSame(breadthFirst.get(i), node, "node " + i);
      assertTrue(seen.add(node), "node " + i + " listed twice");
      assertEquals(node.childCount(), view.childCount(i));
      int first = view.firstChild(i);
      for (int c = 0; c < node.childCount(); c++) {
        assertSame(node.child(c), view.node(first + c), "child " + c + " of node " + i);
      }
      assertEquals(node.size(), view.size(i));
      assertEquals(node.ownTargetCount(), view.ownTargetCount(i));
      for (int k = 0; k < node.ownTargetCount(); k++) {
        assertEquals(node.ownTarget(k), view.ownTarget(i, k));
      }
      assertEquals(node.maxDistance(), view.maxDistance(i));
      assertEquals(
          Double.doubleToLongBits(node.squaredNorm()),
          Double.doubleToLongBits(view.squaredNorm(i)));
      assertEquals(Double.doubleToLongBits(node.dot(x)), Double.doubleToLongBits(view.dot(x, i)));
    }
  }

  /**
   * Searches walk the nodes until the tree has gone unchanged for a search per 512 targets, then
   * read its snapshot; a change starts the count again.
   */
  @Test
  void searchesReadTheSnapshotOnceTheTreeStaysPut() {
    SgTree tree = TreeRepairTest.tree(2_600, 9); // 5 searches walk the nodes
    for (int round = 0; round < 2; round++) {
      for (int search = 0; search < 4; search++) {
        assertTrue(tree.searchView() instanceof NodeWalk, "search " + search);
      }
      assertSame(tree.snapshot(), tree.searchView());
      tree.delete(round);
    }
  }

  /**
   * Its tiles hold every node's codes, scale and own targets, the last one padded with weightless
   * rows, and score each node as {@link SgTreeSnapshot#tileScore} and {@link
   * SgTreeSnapshot#tileScores} do, bit for bit.
   */
  @Test
  void itsTilesScoreEachNodeAsTileScoreDoes() {
    SgTree tree = TreeRepairTest.tree(700, 3);
    SgTreeSnapshot s = tree.snapshot();
    int rows = TileScores.ROWS;
    float[][] queries = TreeVectors.clustered(5, DIM, 4);
    float[] tile = new float[DIM * rows];
    float[] scale = new float[rows];
    float[] weight = new float[rows];
    float[][] scores = new float[queries.length][rows];
    for (int first = 0; first < s.nodeCount(); first += rows) {
      s.tile(first, tile, scale, weight);
      TileScores.dots(tile, scale, queries, scores);
      float[] alone = new float[rows];
      s.tileScores(queries[0], first, Math.min(rows, s.nodeCount() - first), alone);
      for (int r = 0; r < rows; r++) {
        int node = first + r;
        assertEquals(node < s.nodeCount() ? s.ownTargetCount(node) : 0, weight[r], "row " + node);
        for (int q = 0; node < s.nodeCount() && q < queries.length; q++) {
          assertEquals(
              Float.floatToIntBits(s.tileScore(queries[q], node)),
              Float.floatToIntBits(scores[q][r]),
              "node " + node + ", query " + q);
          assertEquals(s.dot(queries[q], node), scores[q][r], 1e-5);
          if (q == 0) {
            assertEquals(Float.floatToIntBits(alone[r]), Float.floatToIntBits(scores[q][r]));
          }
        }
      }
    }
  }

  @Test
  void aSnapshotIsTheTreeBreadthFirst() {
    SgTree tree = TreeRepairTest.tree(2_000, 1);
    assertMirrors(tree, new SplittableRandom(2));
  }

  @Test
  void everyChangeOfTheTreeIsInItsNextSnapshot() {
    SplittableRandom random = new SplittableRandom(3);
    float[][] vectors = TreeVectors.clustered(1_200, DIM, 4);
    SgTree tree = SgTree.build(DIM, 1.3, SgTreeTest.ids(800), slice(vectors, 0, 800), 5);
    assertMirrors(tree, random);
    int next = 800;
    int duplicate = 100_000;
    for (int round = 0; round < 12; round++) {
      switch (round % 4) {
        case 0 -> { // inserts
          for (int k = 0; k < 40 && next < vectors.length; k++, next++) {
            tree.insert(next, vectors[next]);
          }
          // and duplicates, which join a node's own targets
          for (int k = 0; k < 5; k++, duplicate++) {
            SgNode node = tree.nodeOf(random.nextInt(next));
            if (node != null) {
              tree.insert(duplicate, node.vector());
            }
          }
        }
        case 1 -> { // deletes, some leaving hollow nodes
          for (int k = 0; k < 40; k++) {
            tree.delete(random.nextInt(next));
          }
        }
        case 2 -> { // vectors moved, tree not yet repaired
          TreeRepairTest.move(tree, TreeRepairTest.drift(0.3, round));
        }
        default -> { // moved and repaired (the repair rebuilds what broke)
          double drift = TreeRepairTest.move(tree, TreeRepairTest.drift(0.3, round));
          assertMirrors(tree, random);
          TreeRepair.repair(tree, drift, TreeRepair.Mode.EXACT, round);
        }
      }
      assertMirrors(tree, random);
    }
    for (int t = 0; t < next; t++) {
      tree.delete(t);
    }
    for (int t = 100_000; t < duplicate; t++) {
      tree.delete(t);
    }
    assertMirrors(tree, random);
  }

  @Test
  void aRestoredTreeHasItsOwnSnapshot() {
    SgTree tree = TreeRepairTest.tree(1_000, 6);
    byte[] shape = SgTreeShape.write(tree);
    float[][] vectors = new float[1_000][];
    for (int t = 0; t < vectors.length; t++) {
      vectors[t] = tree.nodeOf(t).vector();
    }
    SgTree restored = SgTreeShape.read(shape, DIM, 1.3, t -> t, vectors, 7).tree();
    assertMirrors(restored, new SplittableRandom(8));
  }

  private static float[][] slice(float[][] all, int from, int to) {
    float[][] out = new float[to - from][];
    System.arraycopy(all, from, out, 0, out.length);
    return out;
  }
}
