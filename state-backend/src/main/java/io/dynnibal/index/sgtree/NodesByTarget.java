package io.dynnibal.index.sgtree;

import java.util.Arrays;

/**
 * Which node holds each target, as an array indexed by target: targets are a shard's dense slots
 * (0, 1, 2, ...), so this costs one reference per target where a {@code HashMap<Integer, SgNode>}
 * adds an entry and a boxed key.
 */
final class NodesByTarget {
  private SgNode[] nodes = new SgNode[16];
  private int size;

  SgNode get(int target) {
    return target >= 0 && target < nodes.length ? nodes[target] : null;
  }

  boolean containsKey(int target) {
    return get(target) != null;
  }

  void put(int target, SgNode node) {
    if (target < 0) {
      throw new IllegalArgumentException("targets are slots >= 0, got " + target);
    }
    if (target >= nodes.length) {
      nodes = Arrays.copyOf(nodes, Math.max(target + 1, nodes.length + (nodes.length >> 1)));
    }
    if (nodes[target] == null) {
      size++;
    }
    nodes[target] = node;
  }

  /** The node that held {@code target}, or null. */
  SgNode remove(int target) {
    SgNode node = get(target);
    if (node != null) {
      nodes[target] = null;
      size--;
    }
    return node;
  }

  int size() {
    return size;
  }

  boolean isEmpty() {
    return size == 0;
  }
}
