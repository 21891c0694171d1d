package io.dynnibal.index.sgtree;

import io.dynnibal.index.TileScores;
import io.dynnibal.index.VectorMath;
import java.util.Arrays;
import java.util.List;

/**
 * A read-only copy of what a search reads of each node of an {@link SgTree}, in flat arrays in
 * breadth-first order: node {@code 0} is the root, and the children of node {@code i} are the nodes
 * {@code firstChild(i)} to {@code firstChild(i) + childCount(i) - 1}, in the order of {@link
 * SgNode#child}, their codes back to back in one array. {@link SgTree#snapshot()} hands out the
 * tree's current one and drops it on any change, so a snapshot never disagrees with its tree.
 *
 * <p>Why: FindClustering splits a node by scoring all its children. On the nodes themselves that is
 * three dependent cache misses a child (the child list, the child, its codes array) at scattered
 * places of the heap; here it is one pass over adjacent memory, and FindClustering finds the same
 * partitions on either. The copy costs the heap of the tree's search fields and codes again, and
 * time in proportion to the nodes to make, at most once per change of the tree ({@link
 * SgTree#searchView()} says when).
 */
public final class SgTreeSnapshot implements TreeView {
  private final int dimension;
  private final SgNode[] nodes;
  private final int[] firstChild; // n + 1 entries: node i's children end where node i + 1's begin
  private final int[] size;
  private final int[] ownTargetCount;
  private final int[] firstTarget;
  private final double[] maxDistance;
  private final int[] squaredCodes;
  private final float[] scale;
  private final byte[] codes;

  /**
   * {@link #codes} a tile at a time, each tile transposed as {@link #tile} hands it out, the last
   * one padded with zeros: made on the first {@link #tile}, so only an exact pass over the cache
   * holds it (a byte a code again), and every later pass widens each tile in one sequential sweep.
   */
  private volatile byte[] tiledCodes;

  /** The largest {@link #squaredNorm} of any node. */
  private final double maxSquaredNorm;

  /** Copies {@code tree}, which must not be empty. */
  SgTreeSnapshot(SgTree tree) {
    List<SgNode> order = tree.nodes();
    if (order.isEmpty()) {
      throw new IllegalArgumentException("an empty tree has no snapshot");
    }
    int n = order.size();
    dimension = tree.dimension();
    nodes = order.toArray(new SgNode[0]);
    firstChild = new int[n + 1];
    size = new int[n];
    ownTargetCount = new int[n];
    firstTarget = new int[n];
    maxDistance = new double[n];
    squaredCodes = new int[n];
    scale = new float[n];
    codes = new byte[Math.multiplyExact(n, dimension)];
    double max = 0;
    int next = 1; // SgTree.nodes() lists each node's children together, in order, after it
    for (int i = 0; i < n; i++) {
      SgNode node = nodes[i];
      firstChild[i] = next;
      next += node.childCount();
      size[i] = node.size;
      ownTargetCount[i] = node.ownTargetCount();
      firstTarget[i] = ownTargetCount[i] > 0 ? node.ownTarget(0) : -1;
      maxDistance[i] = node.maxDistance;
      squaredCodes[i] = node.squaredCodes;
      scale[i] = node.scale;
      System.arraycopy(node.codes, 0, codes, i * dimension, dimension);
      max = Math.max(max, squaredNorm(i));
    }
    firstChild[n] = next;
    maxSquaredNorm = max;
  }

  /**
   * The largest norm of any node's vector as its codes hold it: with a query's norm, a bound on
   * every score the snapshot gives it (Cauchy-Schwarz).
   */
  public double maxNorm() {
    return Math.sqrt(maxSquaredNorm);
  }

  /** Nodes in the tree: indexes {@code 0} to {@code nodeCount() - 1}. */
  public int nodeCount() {
    return nodes.length;
  }

  @Override
  public SgNode node(int i) {
    return nodes[i];
  }

  /** The index of node {@code i}'s first child (its children's are consecutive). */
  @Override
  public int firstChild(int i) {
    return firstChild[i];
  }

  @Override
  public int childCount(int i) {
    return firstChild[i + 1] - firstChild[i];
  }

  /** {@link SgNode#size()} of node {@code i}. */
  @Override
  public int size(int i) {
    return size[i];
  }

  /** {@link SgNode#ownTargetCount()} of node {@code i}. */
  @Override
  public int ownTargetCount(int i) {
    return ownTargetCount[i];
  }

  /** {@link SgNode#ownTarget} {@code k} of node {@code i}. */
  @Override
  public int ownTarget(int i, int k) {
    return k == 0 ? firstTarget[i] : nodes[i].ownTarget(k);
  }

  /** {@link SgNode#maxDistance()} of node {@code i}. */
  @Override
  public double maxDistance(int i) {
    return maxDistance[i];
  }

  /** {@link SgNode#squaredNorm()} of node {@code i}, the same bits. */
  @Override
  public double squaredNorm(int i) {
    return VectorMath.squaredNorm(squaredCodes[i], scale[i]);
  }

  /** {@link SgNode#dot} of node {@code i}, the same bits. */
  @Override
  public double dot(float[] x, int i) {
    return VectorMath.dot(x, codes, i * dimension, scale[i]);
  }

  /**
   * Nodes {@code first} to {@code first + TileScores.ROWS - 1} as a {@link TileScores} tile: the
   * 8-bit codes as floats, transposed into {@code tile}, each node's scale in {@code scale} and its
   * own target count in {@code weight}; rows past the last node are zero.
   */
  public void tile(int first, float[] tile, float[] scale, float[] weight) {
    if (first < 0 || first % TileScores.ROWS != 0 || tile.length != dimension * TileScores.ROWS) {
      throw new IllegalArgumentException(
          "a tile starts at a multiple of " + TileScores.ROWS + " and holds its rows' codes");
    }
    int rows = Math.max(0, Math.min(TileScores.ROWS, nodes.length - first));
    if (rows == 0) {
      Arrays.fill(tile, 0f);
    } else {
      TileScores.widen(tiledCodes(), first * dimension, tile);
    }
    for (int r = 0; r < TileScores.ROWS; r++) {
      scale[r] = r < rows ? this.scale[first + r] : 0f;
      weight[r] = r < rows ? ownTargetCount[first + r] : 0f;
    }
  }

  private byte[] tiledCodes() {
    byte[] tiled = tiledCodes;
    if (tiled == null) { // threads that race each make the same bytes
      int tiles = (nodes.length + TileScores.ROWS - 1) / TileScores.ROWS;
      tiled = new byte[Math.multiplyExact(tiles * TileScores.ROWS, dimension)];
      for (int first = 0; first < nodes.length; first += TileScores.ROWS) {
        int rows = Math.min(TileScores.ROWS, nodes.length - first);
        int base = first * dimension;
        for (int j = 0; j < dimension; j++) {
          int to = base + j * TileScores.ROWS;
          for (int r = 0, from = base + j; r < rows; r++, from += dimension) {
            tiled[to + r] = codes[from];
          }
        }
      }
      tiledCodes = tiled;
    }
    return tiled;
  }

  /**
   * Node {@code i}'s score as {@link TileScores#dots} scores its row of {@link #tile}, the same
   * bits.
   */
  public float tileScore(float[] x, int i) {
    float acc = 0;
    for (int j = 0, at = i * dimension; j < dimension; j++, at++) {
      acc = Math.fma((float) codes[at], x[j], acc);
    }
    return scale[i] * acc;
  }

  /**
   * {@link #tileScore} of nodes {@code first} to {@code first + count - 1} into {@code out}, four
   * nodes at a time (four independent chains of multiply-adds, each in its own order: the same
   * bits).
   */
  public void tileScores(float[] x, int first, int count, float[] out) {
    int k = 0;
    for (; k + 4 <= count; k += 4) {
      int a = (first + k) * dimension;
      int b = a + dimension;
      int c = b + dimension;
      int d = c + dimension;
      float s0 = 0;
      float s1 = 0;
      float s2 = 0;
      float s3 = 0;
      for (int j = 0; j < dimension; j++) {
        float v = x[j];
        s0 = Math.fma((float) codes[a + j], v, s0);
        s1 = Math.fma((float) codes[b + j], v, s1);
        s2 = Math.fma((float) codes[c + j], v, s2);
        s3 = Math.fma((float) codes[d + j], v, s3);
      }
      out[k] = scale[first + k] * s0;
      out[k + 1] = scale[first + k + 1] * s1;
      out[k + 2] = scale[first + k + 2] * s2;
      out[k + 3] = scale[first + k + 3] * s3;
    }
    for (; k < count; k++) {
      out[k] = tileScore(x, first + k);
    }
  }

  /** Nodes side by side (a node's children) scored together ({@link VectorMath#dots}). */
  @Override
  public void dots(float[] x, int first, int count, double[] out) {
    VectorMath.dots(x, codes, first * dimension, scale, first, count, out);
  }
}
