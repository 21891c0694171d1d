package io.dynnibal.index.sgtree;

import io.dynnibal.index.Int8Quantizer;
import io.dynnibal.index.VectorMath;
import java.util.Arrays;
import java.util.List;

/**
 * A node of an {@link SgTree}: a cached vector (kept in 8 bits per coordinate, {@link
 * Int8Quantizer}: every distance and score of the tree is computed on the decoded values), the
 * targets that share it exactly (duplicates are distinct targets, never dropped), and the subtrees
 * hanging off it.
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
  /** The vector's codes and scale: {@code vector[i] = codes[i] * scale}. */
  final byte[] codes;

  float scale;

  /**
   * {@code sum codes[i]^2}: {@code |vector|^2 = scale^2 * squaredCodes} exactly (the scale is a
   * power of two), kept in an int rather than the double it stands for: there is a node per target,
   * so every node field is per-target heap.
   */
  int squaredCodes;

  int level;

  /**
   * The first own target, -1 for a hollow node; the rest (duplicates, rare) in {@link #others},
   * null when there are none. Most nodes hold one target, and need no array for it.
   */
  private int first = -1;

  private int[] others;
  SgNode parent;

  /** A leaf's children: one shared empty list (most nodes are leaves, and need no list each). */
  static final List<SgNode> NO_CHILDREN = List.of();

  /** {@link #NO_CHILDREN} until the first child is attached ({@link SgTree#attach}). */
  List<SgNode> children = NO_CHILDREN;

  double radius;
  double maxDistance;
  double minChildDistance = Double.POSITIVE_INFINITY;
  int size;

  /**
   * A node at the vector {@code codes} and {@code scale} stand for ({@link Int8Quantizer}); the
   * node takes the array.
   */
  SgNode(byte[] codes, float scale, int[] targets, int targetCount) {
    this.codes = codes;
    this.scale = scale;
    this.squaredCodes = VectorMath.squaredCodes(codes);
    for (int i = 0; i < targetCount; i++) {
      addTarget(targets[i]);
    }
    this.size = targetCount;
  }

  /**
   * The representative vector (shared by all own targets), decoded into a new array: for what runs
   * once per node; scores and distances on a search's path go through {@link #dot} and {@link
   * #distanceTo}, which read the codes.
   */
  public float[] vector() {
    float[] out = new float[codes.length];
    Int8Quantizer.decode(codes, scale, out);
    return out;
  }

  /**
   * {@code <x, vector()>} ({@link VectorMath#dot(float[], float[])}), bit for bit, without
   * decoding.
   */
  public double dot(float[] x) {
    return VectorMath.dot(x, codes, scale);
  }

  /** The distance from this node's vector to {@code x} (decodes it: not for a hot path). */
  public double distanceTo(float[] x) {
    return VectorMath.distance(vector(), x);
  }

  /** The distance from this node's vector to the one {@code codes} and {@code scale} stand for. */
  double distanceTo(byte[] codes, float scale) {
    return VectorMath.distance(this.codes, this.scale, codes, scale);
  }

  /** The distance between two nodes' vectors. */
  public double distanceTo(SgNode other) {
    return VectorMath.distance(codes, scale, other.codes, other.scale);
  }

  /** {@code |vector|^2}, kept so a distance to a query costs one inner product. */
  public double squaredNorm() {
    return VectorMath.squaredNorm(squaredCodes, scale);
  }

  /** Sets the vector's scale after its codes changed in place. */
  void recoded(float scale) {
    this.scale = scale;
    this.squaredCodes = VectorMath.squaredCodes(codes);
  }

  public int level() {
    return level;
  }

  /**
   * Targets whose vector is exactly this node's vector. At least one for a leaf; 0 for a hollow
   * node, one whose targets were deleted while it had children ({@link SgTree#delete}).
   */
  public int ownTargetCount() {
    return first < 0 ? 0 : others == null ? 1 : 1 + others.length;
  }

  public int ownTarget(int i) {
    return i == 0 ? first : others[i - 1];
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

  /**
   * Distance to the parent; 0 for the root. Computed, not kept: one distance computation where the
   * tree is built, inserted into or repaired, against a field in every node.
   */
  public double parentDistance() {
    return parent == null ? 0 : parent.distanceTo(this);
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
    while (index >= node.ownTargetCount()) {
      index -= node.ownTargetCount();
      for (SgNode child : node.children) {
        if (index < child.size) {
          node = child;
          break;
        }
        index -= child.size;
      }
    }
    return new Located(node.ownTarget(index), node);
  }

  /** A target and the node whose vector it has. */
  public record Located(int target, SgNode node) {}

  /** The own targets, as a new array. */
  int[] ownTargets() {
    int[] out = new int[ownTargetCount()];
    for (int i = 0; i < out.length; i++) {
      out[i] = ownTarget(i);
    }
    return out;
  }

  void addTarget(int target) {
    if (first < 0) {
      first = target;
    } else if (others == null) {
      others = new int[] {target};
    } else {
      others = Arrays.copyOf(others, others.length + 1);
      others[others.length - 1] = target;
    }
  }

  boolean removeTarget(int target) {
    int count = ownTargetCount();
    for (int i = 0; i < count; i++) {
      if (ownTarget(i) == target) {
        int last = ownTarget(count - 1);
        if (i == 0) {
          first = last;
        } else {
          others[i - 1] = last;
        }
        if (count == 1) {
          first = -1;
        } else {
          others = count == 2 ? null : Arrays.copyOf(others, count - 2);
        }
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
        + Arrays.toString(ownTargets())
        + ", children="
        + children.size()
        + ", size="
        + size
        + ", radius="
        + radius
        + "}";
  }
}
