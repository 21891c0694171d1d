package io.dynnibal.index.sgtree;

import io.dynnibal.index.Int8Quantizer;
import io.dynnibal.index.VectorMath;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.Consumer;

/**
 * A Stable Greedy (SG) tree (Zaheer et al. 2019; paper §3.2) over d'-dimensional target vectors
 * with Euclidean distance and base {@code b > 1}. In the compressed form kept here (see {@link
 * SgNode}) the invariants are, for every node {@code p} and child {@code c} at level {@code l}:
 *
 * <ol>
 *   <li>levels: {@code l < level(p)};
 *   <li>covering: {@code d(p, c) <= b^(l+1)};
 *   <li>separation from the parent's own point (its implicit self-child): {@code d(p, c) > b^l};
 *   <li>separation between siblings (SG: siblings only, not the whole level): two children of
 *       {@code p} at the same level {@code l} are more than {@code b^l} apart;
 *   <li>bookkeeping: radius, mind and size as documented on {@link SgNode}.
 * </ol>
 *
 * Nesting holds by construction: a node's point stands for itself at every level below its own.
 * Targets are int ids; a vector equal to a node's vector joins that node as a duplicate. Vectors
 * are kept in 8 bits per coordinate ({@link Int8Quantizer}): a vector inserted is first snapped to
 * the nearest value the tree can hold, and the invariants hold exactly for the snapped vectors (two
 * vectors that snap to the same point are duplicates). Not thread-safe.
 */
public final class SgTree {
  private final int dimension;
  private final double base;
  private final LevelScales scales;
  private final NodesByTarget nodeOfTarget = new NodesByTarget();
  private SgNode root;

  /** {@link #snapshot()}'s copy, null until asked for and again after any change. */
  private SgTreeSnapshot snapshot;

  /** Searches through {@link #searchView()} since the last change. */
  private int searchesSinceChange;

  public SgTree(int dimension, double base) {
    if (dimension < 1) {
      throw new IllegalArgumentException("dimension must be positive, got " + dimension);
    }
    if (!(base > 1) || Double.isInfinite(base)) {
      throw new IllegalArgumentException("base must be a finite number > 1, got " + base);
    }
    this.dimension = dimension;
    this.base = base;
    this.scales = new LevelScales(base);
  }

  /** Bulk build (farthest-first from an approximate medoid); see {@link SgTreeBuilder}. */
  public static SgTree build(
      int dimension, double base, int[] targets, float[][] vectors, long seed) {
    SgTree tree = new SgTree(dimension, base);
    new SgTreeBuilder(tree, seed).build(targets, vectors);
    return tree;
  }

  public int dimension() {
    return dimension;
  }

  public double base() {
    return base;
  }

  /** The root, or null for an empty tree. */
  public SgNode root() {
    return root;
  }

  /**
   * What a search reads of the tree, in flat arrays ({@link SgTreeSnapshot}): made on the first
   * call after a change and the same object until the next; null for an empty tree.
   */
  public SgTreeSnapshot snapshot() {
    if (snapshot == null && root != null) {
      snapshot = new SgTreeSnapshot(this);
    }
    return snapshot;
  }

  /**
   * What a search reads the tree through: its {@link #snapshot()} once the tree has gone unchanged
   * for a search per 512 targets (the first ones walk the nodes themselves, {@link NodeWalk}); null
   * for an empty tree. Why wait: a snapshot costs time in proportion to the tree's nodes to make
   * and saves each search only a part of its time, so a large tree changed before every batch of
   * searches (targets streaming in) would pay more for snapshots than they save. A tree that stays
   * put, as between two model updates, gets one after a fraction of a batch.
   */
  public TreeView searchView() {
    if (root == null) {
      return null;
    }
    if (snapshot == null && ++searchesSinceChange <= root.size / 512) {
      return new NodeWalk(root);
    }
    return snapshot();
  }

  /** Drops the snapshot: called by everything that changes a node or the tree's shape. */
  void changed() {
    snapshot = null;
    searchesSinceChange = 0;
  }

  /** Number of targets (duplicates counted). */
  public int size() {
    return root == null ? 0 : root.size;
  }

  public boolean contains(int target) {
    return nodeOfTarget.containsKey(target);
  }

  /** The node holding a target, or null. */
  public SgNode nodeOf(int target) {
    return nodeOfTarget.get(target);
  }

  /**
   * {@code b^level}: the covering distance of a child at {@code level - 1}, the separation of
   * children at it.
   */
  public double scale(int level) {
    return scales.scale(level);
  }

  /**
   * The level of a child at distance {@code d > 0} from its parent: {@code b^level < d <=
   * b^(level+1)}.
   */
  public int levelFor(double d) {
    return scales.levelFor(d);
  }

  /**
   * Inserts a target: descends greedily into the closest child that can cover the vector and
   * becomes a new child where none can (the root grows its level as needed); an equal vector joins
   * its node as a duplicate. The tree keeps the vector snapped to 8 bits per coordinate ({@link
   * Int8Quantizer#snap}), not the array given.
   *
   * @throws IllegalArgumentException if the target is already present or the vector is not finite
   *     or of the wrong dimension
   */
  public void insert(int target, float[] vector) {
    validate(vector, target);
    if (target < 0) {
      throw new IllegalArgumentException("targets are slots >= 0, got " + target);
    }
    if (nodeOfTarget.containsKey(target)) {
      throw new IllegalArgumentException("target " + target + " is already in the tree");
    }
    insertPoint(root, Int8Quantizer.snap(vector), new int[] {target}, 1);
  }

  /**
   * Removes a target; it is never returned by a search or sampler afterwards. A duplicate just
   * leaves its node. The last target of a leaf takes the leaf out. The last target of a node with
   * children leaves the node in place, hollow: its vector stays the reference point its subtree's
   * bounds are measured from, so nothing below it moves (taking the node out would re-insert every
   * descendant, a cost that grows with the subtree). A hollow node that loses its last child leaves
   * too ({@link #pruneHollow}).
   *
   * @return false if the target was not in the tree
   */
  public boolean delete(int target) {
    SgNode node = nodeOfTarget.remove(target);
    if (node == null) {
      return false;
    }
    changed();
    node.removeTarget(target);
    for (SgNode a = node; a != null; a = a.parent) {
      a.size--;
    }
    pruneHollow(node);
    return true;
  }

  /**
   * Takes out {@code node} if it is a hollow leaf (no target, no child), and then each ancestor
   * that this leaves a hollow leaf. Sizes are unchanged: a hollow leaf holds nothing. A node taken
   * out loses its parent link, so nothing can be placed under it again.
   *
   * @return the lowest node of the chain still in the tree ({@code node} itself when it stays), or
   *     null when the tree is now empty
   */
  SgNode pruneHollow(SgNode node) {
    while (node != null && node.ownTargetCount() == 0 && node.children.isEmpty()) {
      SgNode parent = node.parent;
      node.parent = null;
      if (parent == null) {
        if (root == node) {
          root = null;
        }
        return null;
      }
      parent.children.remove(node);
      if (parent.children.isEmpty()) {
        parent.maxDistance = 0; // a leaf again: its bounds are exact once more
        parent.radius = 0;
        parent.minChildDistance = Double.POSITIVE_INFINITY;
      }
      node = parent;
    }
    return node;
  }

  /**
   * Places a point (with all its targets) under {@code start}, or under the lowest ancestor of it
   * that covers it. {@code vector} is snapped already ({@link Int8Quantizer#snap}, or a node's
   * {@link SgNode#vector()}): its codes are exactly those of the vector the distances that placed
   * it were computed on.
   */
  void insertPoint(SgNode start, float[] vector, int[] targets, int count) {
    if (count == 0) {
      return; // a hollow node's point: nothing to place
    }
    changed();
    float pointScale = Int8Quantizer.scaleFor(vector);
    byte[] point = new byte[vector.length];
    Int8Quantizer.encode(vector, pointScale, point);
    if (root == null) {
      root = new SgNode(point, pointScale, targets, count);
      root.level = Integer.MIN_VALUE / 2;
      register(root, targets, count);
      return;
    }
    SgNode node = start;
    double d = node.distanceTo(point, pointScale);
    while (node.parent != null && d > scale(node.level)) {
      node = node.parent;
      d = node.distanceTo(point, pointScale);
    }
    while (true) {
      // Every node passed on the way down is an ancestor of the new point: keep its maxd exact.
      node.maxDistance = Math.max(node.maxDistance, d);
      if (d == 0) {
        for (int i = 0; i < count; i++) {
          node.addTarget(targets[i]);
        }
        register(node, targets, count);
        for (SgNode a = node; a != null; a = a.parent) {
          a.size += count;
        }
        return;
      }
      SgNode closest = null;
      double closestDistance = Double.POSITIVE_INFINITY;
      double nearestChild = Double.POSITIVE_INFINITY;
      for (SgNode child : node.children) {
        double dc = child.distanceTo(point, pointScale);
        nearestChild = Math.min(nearestChild, dc);
        if (dc <= scale(child.level) && dc < closestDistance) {
          closest = child;
          closestDistance = dc;
        }
      }
      if (closest == null) {
        SgNode leaf = new SgNode(point, pointScale, targets, count);
        leaf.level = levelFor(d);
        attach(node, leaf, d);
        node.minChildDistance = Math.min(node.minChildDistance, nearestChild);
        register(leaf, targets, count);
        for (SgNode a = node; a != null; a = a.parent) {
          a.size += count;
          if (a.parent != null) {
            a.parent.radius = Math.max(a.parent.radius, a.parentDistance() + a.radius);
          }
        }
        return;
      }
      node = closest;
      d = closestDistance;
    }
  }

  /**
   * Moves every cached vector (e.g. by the re-encoding map of a model update) and returns the
   * largest displacement, which bounds how far any distance in the tree moved (twice it). The
   * displacement is measured between the vectors the tree held before and holds after, so it
   * includes the snapping of the moved vector, not only what the mover says it did. The tree's
   * structure is then stale: run {@link TreeRepair} before the next search or sample.
   *
   * @param mover replaces a (decoded) vector's values in place
   */
  public double moveVectors(Consumer<float[]> mover) {
    changed();
    double drift = 0;
    float[] moved = new float[dimension];
    for (SgNode node : nodes()) {
      Int8Quantizer.decode(node.codes, node.scale, moved);
      mover.accept(moved);
      validate(moved, node.ownTargetCount() > 0 ? node.ownTarget(0) : -1);
      byte[] before = node.codes.clone();
      float beforeScale = node.scale;
      float scale = Int8Quantizer.scaleFor(moved);
      Int8Quantizer.encode(moved, scale, node.codes);
      node.recoded(scale);
      drift = Math.max(drift, VectorMath.distance(before, beforeScale, node.codes, node.scale));
    }
    return drift;
  }

  /** Every node, parents before children. */
  List<SgNode> nodes() {
    List<SgNode> out = new ArrayList<>();
    if (root == null) {
      return out;
    }
    out.add(root);
    for (int i = 0; i < out.size(); i++) {
      out.addAll(out.get(i).children);
    }
    return out;
  }

  /**
   * Links a child (whose level is set) under a parent at distance {@code d}; the root's level rises
   * above it.
   */
  void attach(SgNode parent, SgNode child, double d) {
    changed();
    child.parent = parent;
    if (parent.children == SgNode.NO_CHILDREN) {
      parent.children = new ArrayList<>(2);
    }
    parent.children.add(child);
    parent.radius = Math.max(parent.radius, d + child.radius);
    if (parent == root && parent.level <= child.level) {
      parent.level = child.level + 1;
    }
  }

  void setRoot(SgNode node) {
    changed();
    root = node;
  }

  void register(SgNode node, int[] targets, int count) {
    for (int i = 0; i < count; i++) {
      nodeOfTarget.put(targets[i], node);
    }
  }

  void validate(float[] vector, int target) {
    if (vector.length != dimension) {
      throw new IllegalArgumentException(
          "target "
              + target
              + " has a vector of dimension "
              + vector.length
              + ", the tree's is "
              + dimension);
    }
    for (int i = 0; i < vector.length; i++) {
      if (!Float.isFinite(vector[i])) {
        throw new IllegalArgumentException(
            "target " + target + " has a non-finite value at " + i + ": " + vector[i]);
      }
    }
  }

  /** Every node below {@code node}. */
  static List<SgNode> descendants(SgNode node) {
    List<SgNode> out = new ArrayList<>();
    Deque<SgNode> stack = new ArrayDeque<>(node.children);
    while (!stack.isEmpty()) {
      SgNode n = stack.pop();
      out.add(n);
      stack.addAll(n.children);
    }
    return out;
  }

  /**
   * Every violated invariant, one line each (empty when the tree is sound): levels, covering, both
   * separations, radius and mind bounds against the true distances, sizes, parent links, and the
   * target index. See {@link SgTreeInvariants}.
   */
  public List<String> checkInvariants() {
    return SgTreeInvariants.check(this, root, nodeOfTarget);
  }
}
