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
  Prepared prepare(SgTree tree, float[] query);

  /** One query's sampler over one tree, as it stood when prepared. */
  interface Prepared {
    Samples sample(int count, RandomGenerator random);
  }
}
