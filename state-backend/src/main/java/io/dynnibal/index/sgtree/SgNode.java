package io.dynnibal.index.sgtree;

import io.dynnibal.index.VectorMath;
import java.util.Arrays;
import java.util.List;

/**
 * A node of an {@link SgTree}: a cached vector, the targets that share it exactly (duplicates are
 * distinct targets, never dropped), and the subtrees hanging off it.
 *
 * <p>The tree is stored compressed: a node's point is implicitly present at every level below its
 * own (nesting), and a child sits at the level fixed by its distance {@code d} to the parent,
 * {@code b^level < d <= b^(level+1)} (self-separation and covering). Per node the tree keeps:
 *
 * <ul>
 *   <li>{@code maxDistance} ({@code maxd}): the largest distance from this vector to a target of
 *       the subtree. Exact after a build and kept exact by inserts; after deletes an upper bound.
 *       What searches and FindClustering use.
 *   <li>{@code radius}: the nested cover radius, {@code max over children (d(this, child) +
 *       child.radius)}, 0 for a leaf: at least maxd, and a child's radius ball lies inside its
 *       parent's, which the rejection sampler's nested envelopes need. Looser than maxd (it adds up
 *       down the tree).
 *   <li>{@code minChildDistance} ({@code mind}): the smallest distance between two children, +inf
 *       below two children. Exact after a build; after deletes a lower bound.
 *   <li>{@code size}: targets in the subtree, own duplicates included.
 * </ul>
 */
public final class SgNode {
  final float[] vector;
  double squaredNorm;
  int level;
  int[] targets;
  int targetCount;
  SgNode parent;
  double parentDistance;

  /** A leaf's children: one shared empty list (most nodes are leaves; 24 bytes each saved). */
  static final List<SgNode> NO_CHILDREN = List.of();

  /** {@link #NO_CHILDREN} until the first child is attached ({@link SgTree#attach}). */
  List<SgNode> children = NO_CHILDREN;

  double radius;
  double maxDistance;
  double minChildDistance = Double.POSITIVE_INFINITY;
  int size;

  SgNode(float[] vector, int[] targets, int targetCount) {
    this.vector = vector;
    this.squaredNorm = VectorMath.dot(vector, vector);
    this.targets = targets;
    this.targetCount = targetCount;
    this.size = targetCount;
  }

  /** The representative vector (shared by all own targets). Do not modify. */
  public float[] vector() {
    return vector;
  }

  /** {@code |vector|^2}, kept so a distance to a query costs one inner product. */
  public double squaredNorm() {
    return squaredNorm;
  }

  public int level() {
    return level;
  }

  /**
   * Targets whose vector is exactly this node's vector. At least one for a leaf; 0 for a hollow
   * node, one whose targets were deleted while it had children ({@link SgTree#delete}).
   */
  public int ownTargetCount() {
    return targetCount;
  }

  public int ownTarget(int i) {
    return targets[i];
  }

  public int childCount() {
    return children.size();
  }

  public SgNode child(int i) {
    return children.get(i);
  }

  public SgNode parent() {
    return parent;
  }

  /** Distance to the parent; 0 for the root. */
  public double parentDistance() {
    return parentDistance;
  }

  /**
   * Nested cover radius: bounds every descendant's distance, and contains each child's radius ball.
   */
  public double radius() {
    return radius;
  }

  /**
   * Upper bound on the distance from this vector to any target in the subtree (exact unless targets
   * were deleted).
   */
  public double maxDistance() {
    return maxDistance;
  }

  /** Lower bound on the distance between two children (mind). */
  public double minChildDistance() {
    return minChildDistance;
  }

  /** Targets in the subtree, own duplicates included. */
  public int size() {
    return size;
  }

  /**
   * The {@code index}-th target of the subtree in a fixed order (own targets, then each child's
   * subtree in turn) and the node that holds it: how the samplers draw a target uniformly from a
   * cluster with one random number.
   */
  public Located locate(int index) {
    if (index < 0 || index >= size) {
      throw new IndexOutOfBoundsException(index + " outside a subtree of " + size + " targets");
    }
    SgNode node = this;
    while (index >= node.targetCount) {
      index -= node.targetCount;
      for (SgNode child : node.children) {
        if (index < child.size) {
          node = child;
          break;
        }
        index -= child.size;
      }
    }
    return new Located(node.targets[index], node);
  }

  /** A target and the node whose vector it has. */
  public record Located(int target, SgNode node) {}

  void addTarget(int target) {
    if (targetCount == targets.length) {
      targets = Arrays.copyOf(targets, Math.max(2, targetCount * 2));
    }
    targets[targetCount++] = target;
  }

  boolean removeTarget(int target) {
    for (int i = 0; i < targetCount; i++) {
      if (targets[i] == target) {
        targets[i] = targets[--targetCount];
        return true;
      }
    }
    return false;
  }

  @Override
  public String toString() {
    return "SgNode{level="
        + level
        + ", targets="
        + Arrays.toString(Arrays.copyOf(targets, targetCount))
        + ", children="
        + children.size()
        + ", size="
        + size
        + ", radius="
        + radius
        + "}";
  }
}
