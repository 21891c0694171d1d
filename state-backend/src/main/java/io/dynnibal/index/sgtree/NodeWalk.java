package io.dynnibal.index.sgtree;

import java.util.Arrays;

/**
 * A {@link TreeView} read from the nodes themselves, for one search: a node gets its index when its
 * parent's children are first asked for. What a search uses while the tree changes too often for a
 * {@link SgTreeSnapshot} to pay ({@link SgTree#searchView()}).
 */
final class NodeWalk implements TreeView {
  private SgNode[] nodes = new SgNode[256];
  private int[] firstChild = new int[256]; // -1 until the node's children have indexes
  private int count;

  NodeWalk(SgNode root) {
    nodes[0] = root;
    firstChild[0] = -1;
    count = 1;
  }

  @Override
  public SgNode node(int i) {
    return nodes[i];
  }

  @Override
  public int firstChild(int i) {
    if (firstChild[i] < 0) {
      SgNode node = nodes[i];
      int n = node.childCount();
      if (count + n > nodes.length) {
        int grown = Math.max(count + n, 2 * nodes.length);
        nodes = Arrays.copyOf(nodes, grown);
        firstChild = Arrays.copyOf(firstChild, grown);
      }
      firstChild[i] = count;
      for (int c = 0; c < n; c++) {
        nodes[count] = node.child(c);
        firstChild[count++] = -1;
      }
    }
    return firstChild[i];
  }

  @Override
  public int childCount(int i) {
    return nodes[i].childCount();
  }

  @Override
  public int size(int i) {
    return nodes[i].size();
  }

  @Override
  public int ownTargetCount(int i) {
    return nodes[i].ownTargetCount();
  }

  @Override
  public int ownTarget(int i, int k) {
    return nodes[i].ownTarget(k);
  }

  @Override
  public double maxDistance(int i) {
    return nodes[i].maxDistance();
  }

  @Override
  public double squaredNorm(int i) {
    return nodes[i].squaredNorm();
  }

  @Override
  public double dot(float[] x, int i) {
    return nodes[i].dot(x);
  }
}
