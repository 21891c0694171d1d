package io.dynnibal.index.sampling;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.TreeVectors;
import io.dynnibal.index.sgtree.SgTree;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class SgForestTest {
  static final int DIM = 8;
  static final MetropolisHastingsSampler PRACTICAL =
      new MetropolisHastingsSampler(
          MetropolisHastingsSampler.Options.practical(
              new FindClustering.Options(20, 1e6, 0.2, 100), 16));

  private static SgForest forest(int targets, int trees) {
    float[][] vectors = TreeVectors.clustered(targets, DIM, 61);
    int[] ids = new int[targets];
    for (int i = 0; i < targets; i++) {
      ids[i] = 1000 + i;
    }
    return SgForest.build(DIM, 1.3, ids, vectors, trees, 3);
  }

  @Test
  void treesHoldDisjointPartsOfEqualSize() {
    SgForest forest = forest(1_003, 4);
    Set<Integer> all = new HashSet<>();
    for (SgTree tree : forest.trees()) {
      assertTrue(tree.size() == 250 || tree.size() == 251, "size " + tree.size());
      assertEquals(List.of(), tree.checkInvariants());
      for (int id = 1000; id < 2003; id++) {
        if (tree.contains(id)) {
          assertTrue(all.add(id), id + " in two trees");
        }
      }
    }
    assertEquals(1_003, all.size());
  }

  @Test
  void mergedSamplesAreTheHighestDistinctCandidatesOfAllTrees() {
    SgForest forest = forest(2_000, 5);
    float[] query = TreeVectors.clustered(1, DIM, 99)[0];
    Samples merged = forest.sample(PRACTICAL, query, 32, new SplittableRandom(1));
    assertEquals(32, merged.size());
    Set<Integer> distinct = new HashSet<>();
    for (int i = 0; i < merged.size(); i++) {
      assertTrue(distinct.add(merged.targets()[i]));
      if (i > 0) {
        assertTrue(merged.logits()[i] <= merged.logits()[i - 1]);
      }
    }
    // The same draws, tree by tree from the same generator: the merge must keep exactly their best
    // 32.
    SplittableRandom replay = new SplittableRandom(1);
    java.util.Map<Integer, Double> union = new java.util.HashMap<>();
    for (SgTree tree : forest.trees()) {
      Samples own = PRACTICAL.sample(tree, query, 32, replay);
      for (int i = 0; i < own.size(); i++) {
        union.put(own.targets()[i], own.logits()[i]);
      }
    }
    List<Integer> expected =
        union.entrySet().stream()
            .sorted(
                java.util.Map.Entry.<Integer, Double>comparingByValue()
                    .reversed()
                    .thenComparing(java.util.Map.Entry.comparingByKey()))
            .limit(32)
            .map(java.util.Map.Entry::getKey)
            .toList();
    assertEquals(expected, java.util.Arrays.stream(merged.targets()).boxed().toList());
  }

  @Test
  void aSeedReproducesTheForestsSamples() {
    float[] query = TreeVectors.clustered(1, DIM, 98)[0];
    int[] first = forest(1_000, 3).sample(PRACTICAL, query, 16, new SplittableRandom(7)).targets();
    int[] second = forest(1_000, 3).sample(PRACTICAL, query, 16, new SplittableRandom(7)).targets();
    assertArrayEquals(first, second);
  }

  @Test
  void insertsGoToTheSmallestTreeAndDeletesLeaveIt() {
    SgForest forest = forest(100, 4);
    float[] v = TreeVectors.clustered(1, DIM, 97)[0];
    forest.insert(5, v);
    assertEquals(101, forest.size());
    assertEquals(
        1,
        forest.trees().stream().filter(t -> t.size() == 26).count(),
        "one tree grew from 25 to 26");
    assertTrue(forest.trees().stream().filter(t -> t.size() == 26).allMatch(t -> t.contains(5)));
    org.junit.jupiter.api.Assertions.assertThrows(
        IllegalArgumentException.class,
        () -> forest.insert(1000, v),
        "a target already in another tree");
    assertTrue(forest.delete(5));
    assertFalse(forest.delete(5));
    assertEquals(100, forest.size());
  }
}
