package io.dynnibal.index.sgtree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.Int8Quantizer;
import io.dynnibal.index.TreeVectors;
import io.dynnibal.index.nystrom.CacheMap;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SgTreeShapeTest {
  static final int DIM = TreeRepairTest.DIM;

  /**
   * A tree as a shard holds it after a while: built in bulk, then targets inserted and deleted (the
   * deletes leave hollow nodes), one target a duplicate of another.
   */
  static SgTree livedIn(long seed) {
    int n = 2_000;
    float[][] vectors = TreeVectors.clustered(n + 400, DIM, seed);
    SgTree tree = SgTree.build(DIM, 1.3, SgTreeTest.ids(n), Arrays.copyOf(vectors, n), seed);
    for (int t = n; t < n + 400; t++) {
      tree.insert(t, vectors[t]);
    }
    tree.insert(n + 400, vectors[7]); // a duplicate
    SplittableRandom random = new SplittableRandom(seed);
    for (int i = 0; i < 300; i++) {
      tree.delete(random.nextInt(n + 400));
    }
    return tree;
  }

  /** Each target's vector as the tree holds it, by target (null: not in the tree). */
  static float[][] heldVectors(SgTree tree, int slots) {
    float[][] out = new float[slots][];
    for (int t = 0; t < slots; t++) {
      SgNode node = tree.nodeOf(t);
      out[t] = node == null ? null : node.vector();
    }
    return out;
  }

  static int hollowNodes(SgTree tree) {
    int hollow = 0;
    for (SgNode node : tree.nodes()) {
      hollow += node.ownTargetCount() == 0 ? 1 : 0;
    }
    return hollow;
  }

  @Test
  void aShapeReadOverTheVectorsItWasWrittenOverIsTheSameTree() {
    SgTree tree = livedIn(1);
    assertTrue(hollowNodes(tree) > 0, "the case needs hollow nodes");
    byte[] shape = SgTreeShape.write(tree);

    SgTreeShape.Restored restored =
        SgTreeShape.read(shape, DIM, 1.3, t -> t, heldVectors(tree, 2_401), 5);

    assertEquals(List.of(), restored.tree().checkInvariants());
    assertEquals(tree.size(), restored.placed());
    assertEquals(0, restored.inserted());
    assertEquals(0, restored.repair().targetsMoved());
    assertArrayEquals(shape, SgTreeShape.write(restored.tree()));
  }

  @ParameterizedTest
  @ValueSource(doubles = {0.05, 0.5})
  void aShapeReadOverMovedVectorsIsSoundAndHoldsEachTargetAtItsNewVector(double strength) {
    SgTree tree = livedIn(2);
    byte[] shape = SgTreeShape.write(tree);
    CacheMap map = TreeRepairTest.drift(strength, 3);
    float[][] moved = heldVectors(tree, 2_401);
    for (float[] v : moved) {
      if (v != null) {
        map.applyInPlace(v, new float[DIM]);
      }
    }

    SgTree restored = SgTreeShape.read(shape, DIM, 1.3, t -> t, moved, 5).tree();

    assertEquals(List.of(), restored.checkInvariants());
    assertEquals(tree.size(), restored.size());
    for (int t = 0; t < moved.length; t++) {
      if (moved[t] != null) {
        assertArrayEquals(Int8Quantizer.snap(moved[t]), restored.nodeOf(t).vector(), "target " + t);
      }
    }
  }

  @Test
  void targetsRenumberedGoneOrNewEndUpExactlyAsTheVectorsSay() {
    SgTree tree = livedIn(4);
    byte[] shape = SgTreeShape.write(tree);
    float[][] held = heldVectors(tree, 2_401);
    // New slots in reverse order; every fiftieth target gone; 50 new ones without a place in the
    // shape.
    int[] slotOf = new int[held.length];
    float[][] vectors = new float[held.length + 50][];
    for (int t = 0; t < held.length; t++) {
      slotOf[t] = t % 50 == 0 ? -1 : held.length - 1 - t;
      if (slotOf[t] >= 0) {
        vectors[slotOf[t]] = held[t];
      }
    }
    float[][] fresh = TreeVectors.clustered(50, DIM, 6);
    System.arraycopy(fresh, 0, vectors, held.length, 50);

    SgTreeShape.Restored restored = SgTreeShape.read(shape, DIM, 1.3, t -> slotOf[t], vectors, 5);

    assertEquals(List.of(), restored.tree().checkInvariants());
    for (int s = 0; s < vectors.length; s++) {
      if (vectors[s] == null) {
        assertNull(restored.tree().nodeOf(s), "slot " + s);
      } else {
        assertArrayEquals(Int8Quantizer.snap(vectors[s]), restored.tree().nodeOf(s).vector());
      }
    }
    assertTrue(restored.inserted() >= 50);
    assertTrue(
        restored.placed() > restored.inserted(),
        "most targets keep their place: " + restored.placed() + " vs " + restored.inserted());
  }

  @Test
  void aDuplicateWhoseVectorNoLongerMatchesItsNodesIsInsertedOnItsOwn() {
    SgTree tree = livedIn(7);
    int duplicate = 2_400;
    SgNode shared = tree.nodeOf(duplicate);
    assertEquals(2, shared.ownTargetCount());
    int other = shared.ownTarget(0) == duplicate ? shared.ownTarget(1) : shared.ownTarget(0);
    float[][] vectors = heldVectors(tree, 2_401);
    vectors[duplicate][0] += 0.5f;

    SgTree restored =
        SgTreeShape.read(SgTreeShape.write(tree), DIM, 1.3, t -> t, vectors, 5).tree();

    assertEquals(List.of(), restored.checkInvariants());
    assertNotEquals(restored.nodeOf(other), restored.nodeOf(duplicate));
    assertArrayEquals(Int8Quantizer.snap(vectors[duplicate]), restored.nodeOf(duplicate).vector());
  }

  @Test
  void withTheRootsTargetsGoneEveryTargetIsBuiltInBulk() {
    SgTree tree = livedIn(8);
    float[][] vectors = heldVectors(tree, 2_401);
    SgNode root = tree.root();
    for (int i = 0; i < root.ownTargetCount(); i++) {
      vectors[root.ownTarget(i)] = null;
    }

    SgTreeShape.Restored restored =
        SgTreeShape.read(SgTreeShape.write(tree), DIM, 1.3, t -> t, vectors, 5);

    assertEquals(List.of(), restored.tree().checkInvariants());
    assertEquals(tree.size() - root.ownTargetCount(), restored.tree().size());
    assertEquals(0, restored.placed());
  }

  @Test
  void anEmptyTreesShapeReadsAsTheVectorsAlone() {
    byte[] shape = SgTreeShape.write(new SgTree(DIM, 1.3));
    float[][] vectors = TreeVectors.clustered(20, DIM, 9);

    SgTree restored = SgTreeShape.read(shape, DIM, 1.3, t -> t, vectors, 5).tree();

    assertEquals(20, restored.size());
    assertEquals(List.of(), restored.checkInvariants());
  }

  @Test
  void malformedShapesAreRejectedWithTheReason() {
    SgTree tree = livedIn(10);
    byte[] shape = SgTreeShape.write(tree);
    float[][] vectors = heldVectors(tree, 2_401);

    IllegalArgumentException truncated =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                SgTreeShape.read(
                    Arrays.copyOf(shape, shape.length / 2), DIM, 1.3, t -> t, vectors, 5));
    assertTrue(truncated.getMessage().contains("truncated"), truncated.getMessage());
    byte[] longer = Arrays.copyOf(shape, shape.length + 1);
    assertThrows(
        IllegalArgumentException.class,
        () -> SgTreeShape.read(longer, DIM, 1.3, t -> t, vectors, 5));
    byte[] otherVersion = shape.clone();
    otherVersion[0] = 9;
    assertThrows(
        IllegalArgumentException.class,
        () -> SgTreeShape.read(otherVersion, DIM, 1.3, t -> t, vectors, 5));
    IllegalArgumentException dimension =
        assertThrows(
            IllegalArgumentException.class,
            () -> SgTreeShape.read(shape, DIM + 1, 1.3, t -> t, new float[0][], 5));
    assertTrue(dimension.getMessage().contains("dimension"), dimension.getMessage());
    // A node that claims 2^29 targets: rejected, not allocated.
    byte[] huge = {
      1, (byte) DIM, 1, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x04, 0, 0
    };
    IllegalArgumentException claimed =
        assertThrows(
            IllegalArgumentException.class,
            () -> SgTreeShape.read(huge, DIM, 1.3, t -> t, vectors, 5));
    assertTrue(claimed.getMessage().contains("targets in"), claimed.getMessage());
    assertFalse(shape.length > 20 * tree.size(), "a few bytes a node: " + shape.length);
  }
}
