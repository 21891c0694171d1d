package io.dynnibal.index.sampling;

import io.dynnibal.index.ClusteredVectors;
import io.dynnibal.index.TreeVectors;
import io.dynnibal.index.sgtree.SgTree;
import java.util.SplittableRandom;

/** A small clustered target set, its tree, and a query near one of its targets. */
final class SamplerFixture {
  final float[][] vectors;
  final SgTree tree;
  final float[] query;

  SamplerFixture(int targets, int dim, long seed) {
    vectors = TreeVectors.clustered(targets, dim, seed);
    int[] ids = new int[targets];
    for (int i = 0; i < targets; i++) {
      ids[i] = i;
    }
    tree = SgTree.build(dim, 1.3, ids, vectors, seed);
    SplittableRandom random = new SplittableRandom(seed);
    query = ClusteredVectors.queryNear(vectors[random.nextInt(targets)], 0.3, random);
  }

  int[] histogram(int[] samples) {
    int[] counts = new int[vectors.length];
    for (int s : samples) {
      counts[s]++;
    }
    return counts;
  }
}
