package io.dynnibal.index.sampling;

import io.dynnibal.index.VectorMath;
import io.dynnibal.index.sgtree.SgNode;
import io.dynnibal.index.sgtree.SgTree;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

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
 * clustering the tree offers (Alg. 2's start), and their number grows with the corpus (about 100 at
 * 10^5 targets, 300 at 10^6 in the benchmark). Splitting keeps every target in exactly one cluster.
 * The paper splits by level; maxd gives the same bounds and is tighter. {@link
 * Partition#gammaBound()} reports the guarantee actually reached.
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
    SgNode root = tree.root();
    if (root == null) {
      return new Partition(List.of(), new double[0], 1);
    }
    double queryNorm = VectorMath.norm(query);
    double startRadius =
        queryNorm == 0
            ? Double.POSITIVE_INFINITY
            : Math.log(options.gamma()) / (2 * options.beta() * queryNorm);

    long cap = root.childCount() + 1L + options.maxClusters();
    Candidates open =
        new Candidates(
            (int) Math.min(cap, tree.size()) + 1, query, position, queryNorm, options.beta());
    open.push(root);
    // Blocks in the order they were closed: a subtree, or (ownOnly) what is left of one after its
    // split, with <x, rep> of its representative.
    List<Cluster> clusters = new ArrayList<>(open.nodes.length);
    double[] scores = new double[open.nodes.length];
    int total = 1; // clusters closed + open
    while (open.size > 0) {
      int c = open.poll();
      SgNode node = open.nodes[c];
      boolean wide = node.maxDistance() > startRadius;
      boolean affordable = node == root || (long) total + node.childCount() <= cap;
      boolean split =
          node.childCount() > 0
              && affordable
              && (wide
                  || node.maxDistance() > options.deepestRadius()
                      && open.distance(c) - node.maxDistance() <= options.deepestRadius());
      if (clusters.size() == scores.length) {
        scores = Arrays.copyOf(scores, scores.length * 2);
      }
      scores[clusters.size()] = open.scores[c];
      clusters.add(new Cluster(node, split));
      if (split) {
        for (int i = 0; i < node.childCount(); i++) {
          open.push(node.child(i));
        }
        total += node.childCount();
      }
    }

    double widestRadius = 0;
    for (Cluster cluster : clusters) {
      widestRadius = Math.max(widestRadius, cluster.radius());
    }
    return new Partition(
        clusters,
        Arrays.copyOf(scores, clusters.size()),
        Math.exp(2 * options.beta() * queryNorm * widestRadius));
  }

  /**
   * The open subtrees: a binary max-heap of candidate indexes by priority, the log of the subtree's
   * envelope mass {@code log size + beta (<x, rep> + |x| maxd)} (an upper bound on the softmax mass
   * it can hold), with each candidate's node and score in parallel arrays. It sifts exactly as
   * {@link java.util.PriorityQueue} does, so candidates of equal priority come out in the same
   * order as they would from one; it only avoids an object per candidate and the comparisons
   * through an interface, which were a third of FindClustering's time.
   */
  private static final class Candidates {
    SgNode[] nodes;
    double[] scores;
    double[] priorities;
    private int[] heap;
    private int count; // candidates pushed so far
    int size; // candidates in the heap

    private final float[] query;
    private final float[] position; // null when it is the query itself
    private final double queryNorm;
    private final double positionSquaredNorm;
    private final double beta;

    Candidates(int capacity, float[] query, float[] position, double queryNorm, double beta) {
      this.query = query;
      this.position = position == query ? null : position;
      this.queryNorm = queryNorm;
      double positionNorm = position == query ? queryNorm : VectorMath.norm(position);
      this.positionSquaredNorm = positionNorm * positionNorm;
      this.beta = beta;
      int n = Math.max(2, capacity);
      nodes = new SgNode[n];
      scores = new double[n];
      priorities = new double[n];
      heap = new int[n];
    }

    void push(SgNode node) {
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
      double score = VectorMath.dot(query, node.vector());
      nodes[c] = node;
      scores[c] = score;
      priorities[c] = Math.log(node.size()) + beta * (score + queryNorm * node.maxDistance());
      // PriorityQueue.siftUp: move up while strictly before the parent.
      int k = size++;
      double p = priorities[c];
      while (k > 0) {
        int parent = (k - 1) >>> 1;
        if (!(p > priorities[heap[parent]])) {
          break;
        }
        heap[k] = heap[parent];
        k = parent;
      }
      heap[k] = c;
    }

    /** The distance from the query's position to candidate {@code c}'s representative. */
    double distance(int c) {
      SgNode node = nodes[c];
      double dot = position == null ? scores[c] : VectorMath.dot(position, node.vector());
      return VectorMath.distanceFromDot(dot, positionSquaredNorm, node.squaredNorm());
    }

    int poll() {
      int top = heap[0];
      int last = heap[--size];
      if (size > 0) {
        // PriorityQueue.siftDown: the higher child (the right one only if strictly higher), move
        // down while the child is strictly before the element.
        double p = priorities[last];
        int k = 0;
        int half = size >>> 1;
        while (k < half) {
          int child = 2 * k + 1;
          int right = child + 1;
          if (right < size && priorities[heap[right]] > priorities[heap[child]]) {
            child = right;
          }
          if (!(priorities[heap[child]] > p)) {
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
