package io.dynnibal.index.sgtree;

import io.dynnibal.index.Int8Quantizer;
import io.dynnibal.index.Varints;
import java.io.ByteArrayOutputStream;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Deque;
import java.util.List;
import java.util.function.IntPredicate;
import java.util.function.IntUnaryOperator;
import java.util.function.UnaryOperator;

/**
 * An SG tree's shape without its vectors (which node holds which targets, its level, its children),
 * and the tree rebuilt from a shape and the vectors: what a restore needs to skip the bulk build.
 * The bulk build compares every point with every child of a wide node (on near-isotropic vectors
 * the root of a large shard is very wide); rebuilding a known shape costs a distance per node and
 * per ancestor, plus the sibling pairs, which is how {@link TreeRepair} checks it.
 *
 * <p>The vectors given back need not be the ones the shape was written over (a restore reads the
 * state's, which the tree held in another frame and snapped after each move): {@link
 * TreeRepair#repair} re-derives every level from the new distances and rebuilds whatever broke, so
 * the tree read is sound whatever the drift; a small drift only means little to repair. Targets
 * that the shape does not place (gone, new, a duplicate whose vector now differs from its node's,
 * or under a node whose targets are all gone) are inserted after.
 *
 * <p>Format, ints as unsigned varints: a version byte, the dimension, the node count; then each
 * node in pre-order: {@code 2k + v} for its {@code k} own targets and {@code v = 1} when its vector
 * follows, as its scale (float bits, 4 bytes) and codes (one byte per coordinate): a hollow node's,
 * which nothing else holds, and a node's whose targets will not bring one back; its {@code k}
 * targets; its level (zig-zag); its child count.
 */
public final class SgTreeShape {
  private static final int VERSION = 1;

  private SgTreeShape() {}

  /** The shape of {@code tree}, its targets as the tree's ints. */
  public static byte[] write(SgTree tree) {
    return write(tree, v -> v, t -> false);
  }

  /**
   * The shape of {@code tree}. A node's vector is written (as {@code current} makes it of the
   * vector the tree holds: the coordinates the vectors will be given back in) when nothing else
   * will hold it: a hollow node's, and a node's whose every target {@code unknownLater} says will
   * come back without a vector (a node with children then stays, hollow, instead of its subtree
   * being inserted again).
   */
  public static byte[] write(
      SgTree tree, UnaryOperator<float[]> current, IntPredicate unknownLater) {
    List<SgNode> nodes = new ArrayList<>();
    if (tree.root() != null) {
      Deque<SgNode> stack = new ArrayDeque<>(List.of(tree.root()));
      while (!stack.isEmpty()) {
        SgNode node = stack.pop();
        nodes.add(node);
        for (int c = node.children.size() - 1; c >= 0; c--) {
          stack.push(node.children.get(c)); // the first child is read first
        }
      }
    }
    Sink out = new Sink(nodes.size() * 8 + 16);
    out.write(VERSION);
    out.varint(tree.dimension());
    out.varint(nodes.size());
    for (SgNode node : nodes) {
      int k = node.ownTargetCount();
      boolean withVector = !node.children.isEmpty();
      for (int i = 0; i < k && withVector; i++) {
        withVector = unknownLater.test(node.ownTarget(i));
      }
      out.varint(2 * k + (k == 0 || withVector ? 1 : 0));
      if (k == 0 || withVector) {
        float[] vector = current.apply(node.vector());
        float scale = Int8Quantizer.scaleFor(vector);
        byte[] codes = new byte[vector.length];
        Int8Quantizer.encode(vector, scale, codes);
        out.int32(Float.floatToIntBits(scale));
        out.write(codes, 0, codes.length);
      }
      for (int i = 0; i < k; i++) {
        out.varint(node.ownTarget(i));
      }
      out.varint((node.level << 1) ^ (node.level >> 31));
      out.varint(node.children.size());
    }
    return out.toByteArray();
  }

  /**
   * What {@link #read} did: targets placed where the shape had them, targets inserted one by one
   * after, and the repair of the placed ones.
   */
  public record Restored(SgTree tree, int placed, int inserted, TreeRepair.Report repair) {}

  /**
   * The tree of {@code shape} over {@code vectors}: target {@code t} of the shape is now {@code
   * slots.applyAsInt(t)} (negative: gone), whose vector is {@code vectors[slot]}; every slot with a
   * vector ends up in the tree, each once. Sound ({@link SgTree#checkInvariants()}) whatever the
   * vectors.
   *
   * @throws IllegalArgumentException if the shape is malformed or of another dimension
   */
  public static Restored read(
      byte[] shape,
      int dimension,
      double base,
      IntUnaryOperator slots,
      float[][] vectors,
      long seed) {
    return read(ByteBuffer.wrap(shape), dimension, base, slots, vectors, seed);
  }

  /** {@link #read(byte[], int, double, IntUnaryOperator, float[][], long)} from a buffer's rest. */
  public static Restored read(
      ByteBuffer shape,
      int dimension,
      double base,
      IntUnaryOperator slots,
      float[][] vectors,
      long seed) {
    SgTree tree = new SgTree(dimension, base);
    for (int s = 0; s < vectors.length; s++) {
      if (vectors[s] != null) {
        tree.validate(vectors[s], s);
      }
    }
    BitSet placed = new BitSet(vectors.length);
    try {
      place(shape, tree, slots, vectors, placed);
    } catch (BufferUnderflowException | IndexOutOfBoundsException e) {
      throw new IllegalArgumentException("malformed SG tree shape: truncated", e);
    }
    if (tree.root() == null) {
      // Not even the root's targets are left: nothing of the shape can be used.
      return bulk(dimension, base, vectors, seed);
    }
    List<SgNode> all = tree.nodes(); // parents before children
    for (int i = all.size() - 1; i >= 0; i--) {
      SgNode node = all.get(i);
      node.size = node.ownTargetCount();
      for (SgNode child : node.children) {
        node.size += child.size;
      }
      // Unknown on these vectors: the repair (which measures each child's distance to its parent
      // first, and recomputes maxd, radius and mind exactly) then compares every pair of siblings.
      node.minChildDistance = 0;
    }
    TreeRepair.Report repair = TreeRepair.repair(tree, 0, TreeRepair.Mode.EXACT, seed);
    int placedCount = placed.cardinality();
    int inserted = 0;
    for (int s = 0; s < vectors.length; s++) {
      if (vectors[s] != null && !placed.get(s)) {
        tree.insert(s, vectors[s]);
        inserted++;
      }
    }
    return new Restored(tree, placedCount, inserted, repair);
  }

  private static Restored bulk(int dimension, double base, float[][] vectors, long seed) {
    int n = 0;
    for (float[] v : vectors) {
      n += v != null ? 1 : 0;
    }
    int[] targets = new int[n];
    float[][] present = new float[n][];
    for (int s = 0, i = 0; s < vectors.length; s++) {
      if (vectors[s] != null) {
        targets[i] = s;
        present[i++] = vectors[s];
      }
    }
    SgTree tree =
        n == 0
            ? new SgTree(dimension, base)
            : SgTree.build(dimension, base, targets, present, seed);
    return new Restored(tree, 0, n, new TreeRepair.Report(n, n == 0 ? 0 : 1, 0, n));
  }

  /** One node being read whose children are still to come; {@code node} null: not placed. */
  private static final class Open {
    final SgNode node;
    int childrenLeft;

    Open(SgNode node, int childrenLeft) {
      this.node = node;
      this.childrenLeft = childrenLeft;
    }
  }

  /**
   * Places the shape's nodes whose vectors are known: a node at its first live target's vector,
   * with those of its other targets that snap to the same point; a node without a live target (and
   * not hollow) is left out with its whole subtree, whose targets are inserted later.
   */
  private static void place(
      ByteBuffer in, SgTree tree, IntUnaryOperator slots, float[][] vectors, BitSet placed) {
    int version = in.get();
    if (version != VERSION) {
      throw new IllegalArgumentException(
          "SG tree shape of version " + version + ", not " + VERSION);
    }
    int dimension = Varints.read(in);
    if (dimension != tree.dimension()) {
      throw new IllegalArgumentException(
          "SG tree shape of dimension " + dimension + ", the tree's is " + tree.dimension());
    }
    int count = Varints.read(in);
    Deque<Open> open = new ArrayDeque<>();
    List<SgNode> hollow = new ArrayList<>();
    int[] live = new int[4];
    for (int n = 0; n < count; n++) {
      if (n > 0 && open.isEmpty()) {
        throw new IllegalArgumentException("malformed SG tree shape: a second root");
      }
      Open parent = open.peek();
      int header = Varints.read(in);
      int k = header >>> 1;
      if (k > in.remaining()) { // each target takes a byte at least
        throw new IllegalArgumentException(
            "malformed SG tree shape: " + k + " targets in " + in.remaining() + " bytes");
      }
      byte[] codes = null;
      float scale = 0;
      if ((header & 1) != 0) {
        scale = Float.intBitsToFloat(in.getInt());
        codes = new byte[dimension];
        in.get(codes);
        boolean powerOfTwo =
            scale >= Float.MIN_NORMAL
                && !Float.isInfinite(scale)
                && (Float.floatToIntBits(scale) & 0x7FFFFF) == 0;
        if (!powerOfTwo) { // what Int8Quantizer gives, and the exact kernels need
          throw new IllegalArgumentException("malformed SG tree shape: a node's scale " + scale);
        }
      }
      if (live.length < k) {
        live = new int[k];
      }
      int liveCount = 0;
      for (int i = 0; i < k; i++) {
        int slot = slots.applyAsInt(Varints.read(in));
        if (slot >= 0
            && slot < vectors.length
            && vectors[slot] != null
            && !placed.get(slot)
            && !contains(live, liveCount, slot)) {
          live[liveCount++] = slot;
        }
      }
      int z = Varints.read(in);
      int level = (z >>> 1) ^ -(z & 1);
      int children = Varints.read(in);
      if (children < 0 || children > count) {
        throw new IllegalArgumentException("malformed SG tree shape: " + children + " children");
      }
      SgNode node = null;
      if (parent == null || parent.node != null) {
        if (liveCount == 0 && codes != null) {
          node = new SgNode(codes, scale, live, 0); // hollow
          hollow.add(node);
        } else if (liveCount > 0) {
          // Encoded straight from the vector: the codes and scale its snapped copy would get.
          scale = Int8Quantizer.scaleFor(vectors[live[0]]);
          codes = new byte[dimension];
          Int8Quantizer.encode(vectors[live[0]], scale, codes);
          node = new SgNode(codes, scale, live, 1);
          byte[] other = new byte[dimension];
          for (int i = 1; i < liveCount; i++) {
            float otherScale = Int8Quantizer.scaleFor(vectors[live[i]]);
            Int8Quantizer.encode(vectors[live[i]], otherScale, other);
            if (otherScale == scale && Arrays.equals(other, codes)) {
              node.addTarget(live[i]);
            }
          }
        }
      }
      if (node != null) {
        node.level = level;
        int own = node.ownTargetCount();
        for (int i = 0; i < own; i++) {
          placed.set(node.ownTarget(i));
        }
        for (int i = 0; i < own; i++) {
          tree.register(node, new int[] {node.ownTarget(i)}, 1);
        }
        if (parent == null) {
          tree.setRoot(node);
        } else {
          // The distance is set once every node is placed (the repair's first pass).
          tree.attach(parent.node, node, 0);
        }
      }
      if (parent != null && --parent.childrenLeft == 0) {
        open.pop();
      }
      if (children > 0) {
        open.push(new Open(node, children));
      }
    }
    if (!open.isEmpty() || in.hasRemaining()) {
      throw new IllegalArgumentException("malformed SG tree shape: its node count is off");
    }
    for (SgNode node : hollow) {
      tree.pruneHollow(node); // its children were all left out
    }
  }

  private static boolean contains(int[] values, int count, int value) {
    for (int i = 0; i < count; i++) {
      if (values[i] == value) {
        return true;
      }
    }
    return false;
  }

  /** A growable byte array with varints. */
  private static final class Sink extends ByteArrayOutputStream {
    Sink(int size) {
      super(size);
    }

    void varint(int value) {
      Varints.write(this, value);
    }

    void int32(int value) {
      write(value >>> 24);
      write(value >>> 16);
      write(value >>> 8);
      write(value);
    }
  }
}
