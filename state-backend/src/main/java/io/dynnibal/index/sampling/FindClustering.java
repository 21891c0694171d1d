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
  static final int ROOT = 0;

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
    return find(tree, query, position, options, null);
  }

  /**
   * As {@link #find(SgTree, float[], float[], Options)}, in {@code workspace}'s arrays: the
   * partition borrows them and holds until the workspace's next use. A shard clustering a batch
   * query after query allocates no partition's worth of arrays per query. Null: the partition gets
   * arrays of its own.
   */
  public static Partition find(
      SgTree tree, float[] query, float[] position, Options options, Workspace workspace) {
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
    ClusteringCandidates open =
        workspace == null ? new ClusteringCandidates() : workspace.candidates;
    open.reset(
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
    double gammaBound = Math.exp(2 * options.beta() * queryNorm * open.widestRadius);
    if (workspace != null) {
      return new Partition(
          new Blocks(view, open.closedNodes, open.closedOwnOnly, n),
          open.closedScores,
          gammaBound,
          open.closedSizes,
          view,
          open.closedNodes);
    }
    int[] blockNodes = Arrays.copyOf(open.closedNodes, n);
    return new Partition(
        new Blocks(view, blockNodes, Arrays.copyOf(open.closedOwnOnly, n), n),
        Arrays.copyOf(open.closedScores, n),
        gammaBound,
        Arrays.copyOf(open.closedSizes, n),
        view,
        blockNodes);
  }

  /**
   * FindClustering's arrays, kept from one query to the next ({@link #find(SgTree, float[],
   * float[], Options, Workspace)}). They grow to the largest partition found with it and are never
   * shrunk. One thread at a time.
   */
  public static final class Workspace {
    private final ClusteringCandidates candidates = new ClusteringCandidates();
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
    private final int count; // the first count entries of the arrays are the blocks

    Blocks(TreeView view, int[] nodes, boolean[] ownOnly, int count) {
      this.view = view;
      this.nodes = nodes;
      this.ownOnly = ownOnly;
      this.count = count;
    }

    @Override
    public Cluster get(int c) {
      return new Cluster(view.node(nodes[c]), ownOnly[c]);
    }

    @Override
    public int size() {
      return count;
    }
  }
}
