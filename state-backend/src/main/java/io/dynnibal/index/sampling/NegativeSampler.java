package io.dynnibal.index.sampling;

import io.dynnibal.index.sgtree.SgTree;
import java.util.random.RandomGenerator;

/**
 * Draws negatives for a query from the softmax {@code P(y|x) ∝ exp(beta <x, y>)} over the targets
 * of one tree. All randomness comes from the generator passed in, so a seeded generator reproduces
 * a run exactly.
 */
public interface NegativeSampler {
  default Samples sample(SgTree tree, float[] query, int count, RandomGenerator random) {
    return prepare(tree, query).sample(count, random);
  }

  /**
   * The query's clustering of the tree (FindClustering's partition and what the sampler derives
   * from it), for any number of draws: a caller that draws again for the same query (e.g. after
   * drawing its own positive) does not cluster the tree again. Drawing from it consumes the
   * generator exactly as {@link #sample} does, so both give the same samples.
   */
  default Prepared prepare(SgTree tree, float[] query) {
    return prepare(tree, query, query);
  }

  /**
   * As {@link #prepare(SgTree, float[])} for a tree whose coordinates are not the query's own (a
   * shard's {@code TreeFrame}): {@code query} is the vector whose inner products with the tree's
   * vectors are the scores, and every bound is taken from it; {@code position} is where the query
   * lies among the tree's vectors, which only decides where the clustering is refined.
   */
  Prepared prepare(SgTree tree, float[] query, float[] position);

  /**
   * {@link #prepare(SgTree, float[], float[])} for each query of a batch ({@code positions} null:
   * each query is its own position). A sampler that scores a batch together faster than one query
   * at a time overrides it; what each query gets is the same either way.
   */
  default Prepared[] prepareAll(SgTree tree, float[][] queries, float[][] positions) {
    Prepared[] out = new Prepared[queries.length];
    for (int q = 0; q < queries.length; q++) {
      out[q] = prepare(tree, queries[q], positions == null ? queries[q] : positions[q]);
    }
    return out;
  }

  /** One query's sampler over one tree, as it stood when prepared. */
  interface Prepared {
    Samples sample(int count, RandomGenerator random);
  }
}
