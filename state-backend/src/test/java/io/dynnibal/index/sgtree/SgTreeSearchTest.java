package io.dynnibal.index.sgtree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.ClusteredVectors;
import io.dynnibal.index.TreeVectors;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class SgTreeSearchTest {
  static final int DIM = 16;

  @ParameterizedTest
  @EnumSource(Similarity.class)
  void exactSearchEqualsBruteForce(Similarity similarity) {
    float[][] vectors = TreeVectors.clustered(4_000, DIM, 21);
    SgTree tree = SgTree.build(DIM, 1.3, SgTreeTest.ids(vectors.length), vectors, 2);
    SplittableRandom random = new SplittableRandom(5);
    for (int q = 0; q < 50; q++) {
      float[] query =
          ClusteredVectors.queryNear(vectors[random.nextInt(vectors.length)], 0.5, random);
      if (q % 2 == 1) {
        for (int i = 0; i < DIM; i++) {
          query[i] *= 3; // not unit norm: the inner-product bound must scale with |x|
        }
      }
      List<Neighbor> expected = bruteForce(vectors, query, 20, similarity);
      List<Neighbor> actual = SgTreeSearch.exact(tree, query, 20, similarity);
      assertEquals(scores(expected), scores(actual), "query " + q);
    }
  }

  @Test
  void exactSearchSkipsDeletedTargets() {
    float[][] vectors = TreeVectors.clustered(1_000, DIM, 22);
    SgTree tree = SgTree.build(DIM, 1.3, SgTreeTest.ids(vectors.length), vectors, 2);
    float[] query = vectors[17];
    assertEquals(17, SgTreeSearch.exact(tree, query, 1, Similarity.EUCLIDEAN).get(0).target());
    tree.delete(17);
    assertTrue(
        SgTreeSearch.exact(tree, query, 50, Similarity.EUCLIDEAN).stream()
            .noneMatch(n -> n.target() == 17));
  }

  @Test
  void beamSearchFindsMostTrueNeighboursAndAllWithAnUnlimitedBeam() {
    float[][] vectors = TreeVectors.clustered(4_000, DIM, 23);
    SgTree tree = SgTree.build(DIM, 1.3, SgTreeTest.ids(vectors.length), vectors, 2);
    SplittableRandom random = new SplittableRandom(6);
    double narrow = 0;
    double wide = 0;
    for (int q = 0; q < 30; q++) {
      float[] query =
          ClusteredVectors.queryNear(vectors[random.nextInt(vectors.length)], 0.5, random);
      List<Neighbor> exact = SgTreeSearch.exact(tree, query, 10, Similarity.INNER_PRODUCT);
      narrow += overlap(exact, SgTreeSearch.beam(tree, query, 10, 16, Similarity.INNER_PRODUCT));
      wide += overlap(exact, SgTreeSearch.beam(tree, query, 10, 256, Similarity.INNER_PRODUCT));
      assertEquals(
          scores(exact),
          scores(SgTreeSearch.beam(tree, query, 10, Integer.MAX_VALUE, Similarity.INNER_PRODUCT)));
    }
    assertTrue(wide >= narrow, "a wider beam found fewer: " + wide + " < " + narrow);
    assertTrue(wide / 30 > 0.9, "overlap with beam 256: " + wide / 30);
  }

  private static double overlap(List<Neighbor> exact, List<Neighbor> found) {
    return exact.stream()
            .filter(n -> found.stream().anyMatch(b -> b.target() == n.target()))
            .count()
        / (double) exact.size();
  }

  static List<Neighbor> bruteForce(float[][] vectors, float[] query, int k, Similarity similarity) {
    List<Neighbor> all = new ArrayList<>();
    for (int i = 0; i < vectors.length; i++) {
      all.add(new Neighbor(i, similarity.score(query, vectors[i])));
    }
    all.sort(Comparator.comparingDouble(Neighbor::score).reversed());
    return all.subList(0, k);
  }

  private static List<Double> scores(List<Neighbor> neighbors) {
    return neighbors.stream().map(Neighbor::score).toList();
  }
}
