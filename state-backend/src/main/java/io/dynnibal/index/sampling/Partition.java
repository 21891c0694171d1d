package io.dynnibal.index.sampling;

import io.dynnibal.index.sgtree.TreeView;
import java.util.List;

/**
 * A clustering of all targets of a tree for one query: every target lies in exactly one cluster.
 * Like its clusters' nodes, the view it was found on holds until the tree changes.
 *
 * <p>The arrays may be longer than the partition: their first {@link #size()} entries are its
 * blocks' (a partition found in a {@link FindClustering.Workspace} borrows the workspace's arrays).
 *
 * @param clusters the blocks
 * @param representativeScores {@code <x, rep>} of each block's representative, in the same order
 * @param gammaBound the guarantee reached: for every target, {@code P(y|x) / Q(y|x) <= gammaBound}
 *     (Prop. 2), i.e. {@code exp(2 * beta * |x| * largest cluster radius)}
 * @param sizes each block's {@link Cluster#size()}, in the same order: read without its node
 * @param view the view of the tree the partition was found on, or null
 * @param nodes each block's node as an index of {@code view}, in the same order; null without one
 */
public record Partition(
    List<Cluster> clusters,
    double[] representativeScores,
    double gammaBound,
    int[] sizes,
    TreeView view,
    int[] nodes) {

  /** A partition of {@code clusters} found without a view. */
  public Partition(List<Cluster> clusters, double[] representativeScores, double gammaBound) {
    this(clusters, representativeScores, gammaBound, sizesOf(clusters), null, null);
  }

  public int size() {
    return clusters.size();
  }

  /** {@code clusters().get(c).size()}. */
  public int size(int c) {
    return sizes[c];
  }

  private static int[] sizesOf(List<Cluster> clusters) {
    int[] sizes = new int[clusters.size()];
    for (int c = 0; c < sizes.length; c++) {
      sizes[c] = clusters.get(c).size();
    }
    return sizes;
  }

  /** Number of targets covered (the tree's size). */
  public long targetCount() {
    long n = 0;
    for (int c = 0; c < size(); c++) {
      n += sizes[c];
    }
    return n;
  }
}
