package io.dynnibal.index.sampling;

import io.dynnibal.index.VectorMath;
import io.dynnibal.index.sgtree.SgNode;

/**
 * One query's inner products {@code <x, child>} with the children of a node FindClustering splits:
 * computed one by one ({@link #of}), or read from blocks a batch of queries shares ({@link
 * BatchScores}). Every implementation gives the values {@link VectorMath#dot} gives, bit for bit,
 * so a partition does not depend on how its scores were obtained.
 */
public interface ChildScores {

  /** Writes {@code <x, node.child(i)>} into {@code out[i]} for every child of {@code node}. */
  void score(SgNode node, double[] out);

  /** The scores of one query computed as they are asked for. */
  static ChildScores of(float[] query) {
    return (node, out) -> scoreEach(query, node, out);
  }

  /** {@code <query, node.child(i)>} into {@code out[i]}, one inner product at a time. */
  static void scoreEach(float[] query, SgNode node, double[] out) {
    for (int i = 0; i < node.childCount(); i++) {
      out[i] = node.child(i).dot(query);
    }
  }
}
