package io.dynnibal.index.sampling;

import io.dynnibal.index.VectorMath;
import io.dynnibal.index.sgtree.TreeView;
import java.util.Arrays;

/**
 * The open subtrees that may still be split, as a binary max-heap of candidate indexes by priority,
 * the log of the subtree's envelope mass {@code log size + beta (<x, rep> + |x| maxd)} (an upper
 * bound on the softmax mass it can hold), ties broken by the order of the pushes; and the closed
 * blocks with their scores, for one query of {@link FindClustering} at a time. Subtrees are nodes
 * of a {@link TreeView} of the tree, by index.
 *
 * <p>Whether a subtree is wide or near does not change while the partition grows, and the budget
 * only shrinks, so a subtree that cannot be split when it is pushed (a leaf, neither wide nor near,
 * or more children than the budget left) is closed at once and never enters the heap: far more
 * subtrees are pushed per query than split, and the heap holds only those that may split. The
 * blocks come out in another order than a heap of all candidates would close them; the partition is
 * the same, because the order among the subtrees that may split is.
 */
final class ClusteringCandidates {
  private TreeView tree;
  int[] nodes = new int[16];
  double[] scores = new double[16];
  double[] priorities = new double[16];
  private int[] heap = new int[16];
  private int count; // candidates pushed into the heap so far
  int size; // candidates in the heap

  int closedCount;
  boolean[] closedOwnOnly = new boolean[2];
  double[] closedScores = new double[2];
  int[] closedSizes = new int[2];
  int[] closedNodes = new int[2];
  double widestRadius; // of the closed blocks
  private double[] childScores = new double[64];

  private float[] query;
  private float[] position; // null when it is the query itself
  private double queryNorm;
  private double positionSquaredNorm;
  private double startRadius;
  private FindClustering.Options options;
  private long cap;

  /** Empties the candidates for a new query, their arrays sized for {@code expectedClusters}. */
  void reset(
      TreeView tree,
      long cap,
      int expectedClusters,
      float[] query,
      float[] position,
      double queryNorm,
      double startRadius,
      FindClustering.Options options) {
    this.tree = tree;
    this.query = query;
    this.position = position == query ? null : position;
    this.queryNorm = queryNorm;
    double positionNorm = position == query ? queryNorm : VectorMath.norm(position);
    this.positionSquaredNorm = positionNorm * positionNorm;
    this.startRadius = startRadius;
    this.options = options;
    this.cap = cap;
    count = 0;
    size = 0;
    closedCount = 0;
    widestRadius = 0;
    // Sized for every cluster the partition may hold: no candidate array grows while it fills.
    int n = Math.max(16, expectedClusters);
    if (nodes.length < n) {
      nodes = new int[n];
      scores = new double[n];
      priorities = new double[n];
      heap = new int[n];
    }
    int closed = Math.max(2, expectedClusters);
    if (closedScores.length < closed) {
      closedScores = new double[closed];
      closedOwnOnly = new boolean[closed];
      closedSizes = new int[closed];
      closedNodes = new int[closed];
    }
  }

  /**
   * Pushes every child of a split node. The children are scored first, all together: in a snapshot
   * their vectors lie back to back.
   */
  void pushChildren(int node, long total) {
    int n = tree.childCount(node);
    int first = tree.firstChild(node);
    if (childScores.length < n) {
      childScores = new double[Math.max(n, 2 * childScores.length)];
    }
    tree.dots(query, first, n, childScores);
    for (int i = 0; i < n; i++) {
      push(first + i, childScores[i], total);
    }
  }

  /**
   * Closes a scored subtree, or opens it when it may be split: it has children, it is wide or near
   * the query, and they fit in the budget left after {@code total} clusters.
   */
  void push(int node, double score, long total) {
    double maxd = tree.maxDistance(node);
    int children = tree.childCount(node);
    boolean mayBeSplit =
        children > 0
            && (node == FindClustering.ROOT || total + children <= cap)
            && (maxd > startRadius
                || maxd > options.deepestRadius()
                    && distance(node, score) - maxd <= options.deepestRadius());
    if (!mayBeSplit) {
      addClosed(node, false, score);
      return;
    }
    if (count == nodes.length) {
      int n = nodes.length * 2;
      nodes = Arrays.copyOf(nodes, n);
      scores = Arrays.copyOf(scores, n);
      priorities = Arrays.copyOf(priorities, n);
    }
    if (size == heap.length) {
      heap = Arrays.copyOf(heap, heap.length * 2);
    }
    int c = count++;
    nodes[c] = node;
    scores[c] = score;
    priorities[c] = Math.log(tree.size(node)) + options.beta() * (score + queryNorm * maxd);
    int k = size++;
    while (k > 0) {
      int parent = (k - 1) >>> 1;
      if (!before(c, heap[parent])) {
        break;
      }
      heap[k] = heap[parent];
      k = parent;
    }
    heap[k] = c;
  }

  /** Closes candidate {@code c}: its whole subtree, or only its own targets when split. */
  void close(int c, boolean split) {
    addClosed(nodes[c], split, scores[c]);
  }

  private void addClosed(int node, boolean ownOnly, double score) {
    int k = closedCount++;
    if (k == closedScores.length) {
      closedOwnOnly = Arrays.copyOf(closedOwnOnly, 2 * k);
      closedScores = Arrays.copyOf(closedScores, 2 * k);
      closedSizes = Arrays.copyOf(closedSizes, 2 * k);
      closedNodes = Arrays.copyOf(closedNodes, 2 * k);
    }
    closedOwnOnly[k] = ownOnly;
    closedScores[k] = score;
    closedNodes[k] = node;
    if (ownOnly) {
      closedSizes[k] = tree.ownTargetCount(node);
    } else {
      closedSizes[k] = tree.size(node);
      widestRadius = Math.max(widestRadius, tree.maxDistance(node));
    }
  }

  /** Higher priority first; of equal priorities, the one pushed first. */
  private boolean before(int a, int b) {
    return priorities[a] > priorities[b] || (priorities[a] == priorities[b] && a < b);
  }

  /** The distance from the query's position to a subtree's representative. */
  private double distance(int node, double score) {
    double dot = position == null ? score : tree.dot(position, node);
    return VectorMath.distanceFromDot(dot, positionSquaredNorm, tree.squaredNorm(node));
  }

  /** The fewest children among the candidates in the heap. */
  int fewestChildren() {
    int fewest = Integer.MAX_VALUE;
    for (int k = 0; k < size; k++) {
      fewest = Math.min(fewest, tree.childCount(nodes[heap[k]]));
    }
    return fewest;
  }

  /** Closes every candidate in the heap unsplit, in the heap's order. */
  void closeAll() {
    for (int k = 0; k < size; k++) {
      close(heap[k], false);
    }
    size = 0;
  }

  int poll() {
    int top = heap[0];
    int last = heap[--size];
    if (size > 0) {
      int k = 0;
      int half = size >>> 1;
      while (k < half) {
        int child = 2 * k + 1;
        int right = child + 1;
        if (right < size && before(heap[right], heap[child])) {
          child = right;
        }
        if (!before(heap[child], last)) {
          break;
        }
        heap[k] = heap[child];
        k = child;
      }
      heap[k] = last;
    }
    return top;
  }
}
