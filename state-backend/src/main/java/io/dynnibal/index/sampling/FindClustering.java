package io.dynnibal.index.sampling;

import io.dynnibal.index.VectorMath;
import io.dynnibal.index.sgtree.SgTree;
import io.dynnibal.index.sgtree.TreeView;
import java.util.AbstractList;
import java.util.Arrays;
import java.util.List;
import java.util.RandomAccess;

/**
 * FindClustering (paper Alg. 2): an adaptive clustering of all targets for one query, coarse far
 * from the query and fine near it. A subtree is split (into its node's own targets and one subtree
 * per child) when
 *
 * <ol>
 *   <li>(Prop. 2) its maxd exceeds {@code log(gamma) / (2 beta |x|)}: after all such splits {@code
 *       P(y|x) / Q(y|x) <= gamma} for every target; or
 *   <li>(Alg. 2's refinement) its maxd exceeds {@code deepestRadius} and it may hold a target
 *       within {@code deepestRadius} of the query ({@code d(x, rep) - maxd <= deepestRadius}); with
 *       the tree's levels, {@code deepestRadius = b^m}.
 * </ol>
 *
 * Subtrees are considered best first by the softmax mass they can hold at most, {@code size *
 * exp(beta (<x, rep> + |x| maxd))}, so when the budget ({@code maxClusters}, the paper's frontier
 * cap) stops the splitting, it has gone to the clusters that can hold the most probability. The
 * root is always split and does not count against the budget: its children are the coarsest
 * clustering the tree offers (Alg. 2's start), and their number grows with the corpus. Splitting
 * keeps every target in exactly one cluster. The paper splits by level; maxd gives the same bounds
 * and is tighter. {@link Partition#gammaBound()} reports the guarantee actually reached. The tree
 * is read through its {@link SgTree#searchView()}: mostly its snapshot, where a node's children lie
 * side by side.
 */
public final class FindClustering {

  /**
   * @param beta score scale of the softmax {@code exp(beta <x, y>)}
   * @param gamma the allowed ratio {@code max P/Q} (Prop. 2), greater than 1
   * @param deepestRadius refine clusters near the query down to this radius ({@code b^m}); 0
   *     refines to leaves
   * @param maxClusters the budget: clusters that splits below the root may add (the partition has
   *     at most {@code 1 + root's children + maxClusters})
   */
  public record Options(double beta, double gamma, double deepestRadius, int maxClusters) {
    public Options {
      if (!(beta > 0) || Double.isInfinite(beta)) {
        throw new IllegalArgumentException("beta must be positive and finite, got " + beta);
      }
      if (!(gamma > 1)) {
        throw new IllegalArgumentException("gamma must be greater than 1, got " + gamma);
      }
      if (!(deepestRadius >= 0)) {
        throw new IllegalArgumentException("deepestRadius must be >= 0, got " + deepestRadius);
      }
      if (maxClusters < 0) {
        throw new IllegalArgumentException("maxClusters must be >= 0, got " + maxClusters);
      }
    }

    /**
     * The paper's parametrisation by tree levels: start where clusters have radius {@code
     * b^startLevel} (so gamma is {@code exp(2 beta b^startLevel)} for a unit-norm query, Prop. 2)
     * and refine down to {@code b^deepestLevel}.
     */
    public static Options atLevels(
        double beta, double base, int startLevel, int deepestLevel, int maxClusters) {
      return new Options(
          beta,
          Math.exp(2 * beta * Math.pow(base, startLevel)),
          Math.pow(base, deepestLevel),
          maxClusters);
    }
  }

  /** The root's index in a {@link TreeView}. */
  private static final int ROOT = 0;

  private FindClustering() {}

  public static Partition find(SgTree tree, float[] query, Options options) {
    return find(tree, query, query, options);
  }

  /**
   * As {@link #find(SgTree, float[], Options)} for a tree whose coordinates are not the query's own
   * ({@code TreeFrame}): scores, priorities and Prop. 2's bound come from {@code query}, the vector
   * whose inner products with the tree's vectors are the scores; the refinement's distances ({@code
   * d(x, rep)}) from {@code position}, the query as a point among the tree's vectors. The two
   * differ unless the frame is a rotation, and only the refinement is about nearness.
   */
  public static Partition find(SgTree tree, float[] query, float[] position, Options options) {
    TreeView view = tree.searchView();
    if (view == null) {
      return new Partition(List.of(), new double[0], 1);
    }
    double queryNorm = VectorMath.norm(query);
    double startRadius =
        queryNorm == 0
            ? Double.POSITIVE_INFINITY
            : Math.log(options.gamma()) / (2 * options.beta() * queryNorm);

    long cap = view.childCount(ROOT) + 1L + options.maxClusters();
    Candidates open =
        new Candidates(
            view,
            cap,
            (int) Math.min(cap, tree.size()) + 1,
            query,
            position,
            queryNorm,
            startRadius,
            options);
    // The root's split does not count against the budget.
    open.push(ROOT, view.dot(query, ROOT), 1);
    int total = 1; // clusters closed + open
    boolean checked = false; // whether the heap was checked for a fitting split since the last one
    while (open.size > 0) {
      int c = open.poll();
      int node = open.nodes[c];
      // Wide or near was settled at the push; only the budget has moved since.
      boolean split = node == ROOT || (long) total + view.childCount(node) <= cap;
      open.close(c, split);
      if (split) {
        total += view.childCount(node);
        open.pushChildren(node, total);
        checked = false;
      } else if (!checked) {
        // The budget is running out: once no candidate left fits in it, none will be split, and
        // they are closed as they lie instead of polled one by one (at the shards' budgets most of
        // a query's candidates would be polled only to be closed).
        checked = true;
        if (cap - total < open.fewestChildren()) {
          open.closeAll();
        }
      }
    }
    int n = open.closedCount;
    int[] blockNodes = Arrays.copyOf(open.closedNodes, n);
    return new Partition(
        new Blocks(view, blockNodes, Arrays.copyOf(open.closedOwnOnly, n)),
        Arrays.copyOf(open.closedScores, n),
        Math.exp(2 * options.beta() * queryNorm * open.widestRadius),
        Arrays.copyOf(open.closedSizes, n),
        view,
        blockNodes);
  }

  /**
   * A partition's blocks, each made when asked for from its node's index and whether it holds the
   * node's own targets only: a query closes many blocks and most are only ever weighed by their
   * score and size, which the partition keeps in arrays.
   */
  private static final class Blocks extends AbstractList<Cluster> implements RandomAccess {
    private final TreeView view;
    private final int[] nodes;
    private final boolean[] ownOnly;

    Blocks(TreeView view, int[] nodes, boolean[] ownOnly) {
      this.view = view;
      this.nodes = nodes;
      this.ownOnly = ownOnly;
    }

    @Override
    public Cluster get(int c) {
      return new Cluster(view.node(nodes[c]), ownOnly[c]);
    }

    @Override
    public int size() {
      return nodes.length;
    }
  }

  /**
   * The open subtrees that may still be split, as a binary max-heap of candidate indexes by
   * priority, the log of the subtree's envelope mass {@code log size + beta (<x, rep> + |x| maxd)}
   * (an upper bound on the softmax mass it can hold), ties broken by the order of the pushes; and
   * the closed blocks with their scores. Subtrees are nodes of a {@link TreeView} of the tree, by
   * index.
   *
   * <p>Whether a subtree is wide or near does not change while the partition grows, and the budget
   * only shrinks, so a subtree that cannot be split when it is pushed (a leaf, neither wide nor
   * near, or more children than the budget left) is closed at once and never enters the heap: far
   * more subtrees are pushed per query than split, and the heap holds only those that may split.
   * The blocks come out in another order than a heap of all candidates would close them; the
   * partition is the same, because the order among the subtrees that may split is.
   */
  private static final class Candidates {
    private final TreeView tree;
    int[] nodes;
    double[] scores;
    double[] priorities;
    private int[] heap;
    private int count; // candidates pushed into the heap so far
    int size; // candidates in the heap

    int closedCount;
    boolean[] closedOwnOnly;
    double[] closedScores;
    int[] closedSizes;
    int[] closedNodes;
    double widestRadius; // of the closed blocks
    private double[] childScores = new double[64];

    private final float[] query;
    private final float[] position; // null when it is the query itself
    private final double queryNorm;
    private final double positionSquaredNorm;
    private final double startRadius;
    private final Options options;
    private final long cap;

    Candidates(
        TreeView tree,
        long cap,
        int expectedClusters,
        float[] query,
        float[] position,
        double queryNorm,
        double startRadius,
        Options options) {
      this.tree = tree;
      this.query = query;
      this.position = position == query ? null : position;
      this.queryNorm = queryNorm;
      double positionNorm = position == query ? queryNorm : VectorMath.norm(position);
      this.positionSquaredNorm = positionNorm * positionNorm;
      this.startRadius = startRadius;
      this.options = options;
      this.cap = cap;
      // Sized for every cluster the partition may hold: no candidate array grows while it fills.
      int n = Math.max(16, expectedClusters);
      nodes = new int[n];
      scores = new double[n];
      priorities = new double[n];
      heap = new int[n];
      closedScores = new double[Math.max(2, expectedClusters)];
      closedOwnOnly = new boolean[closedScores.length];
      closedSizes = new int[closedScores.length];
      closedNodes = new int[closedScores.length];
    }

    /**
     * Pushes every child of a split node. The children are scored first, all together: in a
     * snapshot their vectors lie back to back.
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
     * Closes a scored subtree, or opens it when it may be split: it has children, it is wide or
     * near the query, and they fit in the budget left after {@code total} clusters.
     */
    void push(int node, double score, long total) {
      double maxd = tree.maxDistance(node);
      int children = tree.childCount(node);
      boolean mayBeSplit =
          children > 0
              && (node == ROOT || total + children <= cap)
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
}
