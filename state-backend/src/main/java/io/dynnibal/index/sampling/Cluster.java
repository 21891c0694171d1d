package io.dynnibal.index.sampling;

import io.dynnibal.index.sgtree.SgNode;

/**
 * One block of a {@link Partition}: the whole subtree of a node, or only the node's own targets
 * (what remains of a subtree once its children have been split off). The node's vector represents
 * every target of the block.
 */
public record Cluster(SgNode node, boolean ownOnly) {

  public int size() {
    return ownOnly ? node.ownTargetCount() : node.size();
  }

  /**
   * Upper bound on the distance from the representative to any target of the block (the node's
   * maxd).
   */
  public double radius() {
    return ownOnly ? 0 : node.maxDistance();
  }

  /**
   * The nested cover radius of the block, for bounds that must shrink from parent to child
   * (rejection sampling).
   */
  public double nestedRadius() {
    return ownOnly ? 0 : node.radius();
  }

  /**
   * The {@code index}-th target of the block, {@code 0 <= index < size()}: a uniform index gives a
   * uniform target.
   */
  public SgNode.Located locate(int index) {
    return ownOnly ? new SgNode.Located(node.ownTarget(index), node) : node.locate(index);
  }
}
