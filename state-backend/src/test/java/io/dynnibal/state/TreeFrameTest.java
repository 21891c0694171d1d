package io.dynnibal.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.VectorMath;
import io.dynnibal.index.nystrom.CacheMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class TreeFrameTest {
  private static final int D = ShardIndexTest.D;

  private static float[] random(SplittableRandom random) {
    return ShardIndexTest.random(random);
  }

  @Test
  void aQueryCarriedIntoTheFrameScoresTreeVectorsAsTheQueryScoresCurrentOnes() {
    SplittableRandom random = new SplittableRandom(1);
    TreeFrame frame =
        TreeFrame.identity(D)
            .then(ShardIndexTest.rotationScaledUpTo(2, random))
            .then(ShardIndexTest.rotationScaledUpTo(1.5, random));
    for (int trial = 0; trial < 100; trial++) {
      float[] query = random(random);
      float[] treeVector = random(random);
      assertEquals(
          VectorMath.dot(query, frame.toCurrent(treeVector)),
          VectorMath.dot(frame.queryInTree(query), treeVector),
          1e-4);
    }
  }

  @Test
  void aCurrentVectorStoredInTheFrameReadsBackUnchanged() {
    SplittableRandom random = new SplittableRandom(2);
    TreeFrame frame = TreeFrame.identity(D).then(ShardIndexTest.rotationScaledUpTo(3, random));
    for (int trial = 0; trial < 100; trial++) {
      float[] current = random(random);
      float[] back = frame.toCurrent(frame.toTree(current));
      for (int j = 0; j < D; j++) {
        assertEquals(current[j], back[j], 1e-5);
      }
    }
  }

  /** Where a query lies among tree vectors: the tree vector the frame carries onto it. */
  @Test
  void aQuerysPositionInTheTreeIsTheTreeVectorTheFrameCarriesOntoIt() {
    SplittableRandom random = new SplittableRandom(4);
    TreeFrame frame = TreeFrame.identity(D).then(ShardIndexTest.rotationScaledUpTo(3, random));
    for (int trial = 0; trial < 100; trial++) {
      float[] treeVector = random(random);
      float[] position = frame.positionInTree(frame.toCurrent(treeVector));
      for (int j = 0; j < D; j++) {
        assertEquals(treeVector[j], position[j], 1e-4);
      }
    }
  }

  @Test
  void aRotationDoesNotDistortAndAScalingDistortsByItsRatio() {
    SplittableRandom random = new SplittableRandom(3);
    List<float[]> edges = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      edges.add(random(random));
    }
    assertEquals(1, TreeFrame.identity(D).distortion(edges));
    assertEquals(
        1,
        TreeFrame.identity(D).then(ShardIndexTest.rotationScaledUpTo(1, random)).distortion(edges),
        1e-5);
    float[] m = new float[D * D];
    for (int i = 0; i < D; i++) {
      m[i * D + i] = i == 0 ? 3 : 1;
    }
    TreeFrame stretch = TreeFrame.identity(D).then(new CacheMap(D, m));
    double distortion = stretch.distortion(edges);
    assertTrue(distortion > 1.5 && distortion <= 3 + 1e-6, "distortion " + distortion);
    float[] axis = new float[D];
    axis[0] = 1;
    float[] other = new float[D];
    other[1] = 1;
    assertEquals(3, stretch.distortion(List.of(axis, other)), 1e-6);
  }

  @Test
  void aSingularFrameHoldsWhatItReachesAndRefusesTheRest() {
    float[] m = new float[D * D];
    for (int i = 0; i < D - 1; i++) {
      m[i * D + i] = 2; // the last coordinate is lost
    }
    TreeFrame singular = TreeFrame.identity(D).then(new CacheMap(D, m));
    float[] reached = new float[D];
    Arrays.fill(reached, 0, D - 1, 1);
    float[] back = singular.toCurrent(singular.toTree(reached));
    for (int j = 0; j < D; j++) {
      assertEquals(reached[j], back[j], 1e-5);
    }
    float[] beyond = reached.clone();
    beyond[D - 1] = 1;
    assertNull(singular.toTree(beyond));
  }
}
