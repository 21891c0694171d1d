package io.dynnibal.index.sgtree;

/**
 * The nodes of an {@link SgTree} by index, as a search reads them: node {@code 0} is the root, and
 * the children of node {@code i} are the nodes {@code firstChild(i)} to {@code firstChild(i) +
 * childCount(i) - 1}, in the order of {@link SgNode#child}. Each method gives what the node's own
 * method of the same name gives, bit for bit. Valid until the tree changes.
 */
public interface TreeView {
  SgNode node(int i);

  int firstChild(int i);

  int childCount(int i);

  /** {@link SgNode#size()}. */
  int size(int i);

  int ownTargetCount(int i);

  /** {@link SgNode#ownTarget} {@code k} of node {@code i}. */
  int ownTarget(int i, int k);

  /** {@link SgNode#maxDistance()}. */
  double maxDistance(int i);

  /** {@link SgNode#squaredNorm()}. */
  double squaredNorm(int i);

  /** {@link SgNode#dot}. */
  double dot(float[] x, int i);

  /** {@code out[k] = dot(x, first + k)} for {@code k < count}. */
  default void dots(float[] x, int first, int count, double[] out) {
    for (int k = 0; k < count; k++) {
      out[k] = dot(x, first + k);
    }
  }
}
