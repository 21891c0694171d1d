package io.dynnibal.index.sampling;

import io.dynnibal.index.sgtree.SgTree;
import java.util.random.RandomGenerator;

/**
 * Draws negatives for a query from the softmax {@code P(y|x) ∝ exp(beta <x, y>)} over the targets
 * of one tree. All randomness comes from the generator passed in, so a seeded generator reproduces
 * a run exactly.
 */
public interface NegativeSampler {
  Samples sample(SgTree tree, float[] query, int count, RandomGenerator random);
}
