package io.dynnibal.index.sampling;

import java.util.List;

/**
 * A clustering of all targets of a tree for one query: every target lies in exactly one cluster.
 *
 * @param clusters the blocks
 * @param representativeScores {@code <x, rep>} of each block's representative, in the same order
 * @param gammaBound the guarantee reached: for every target, {@code P(y|x) / Q(y|x) <= gammaBound}
 *     (Prop. 2), i.e. {@code exp(2 * beta * |x| * largest cluster radius)}
 */
public record Partition(List<Cluster> clusters, double[] representativeScores, double gammaBound) {

  public int size() {
    return clusters.size();
  }

  /** Number of targets covered (the tree's size). */
  public long targetCount() {
    long n = 0;
    for (Cluster c : clusters) {
      n += c.size();
    }
    return n;
  }
}
