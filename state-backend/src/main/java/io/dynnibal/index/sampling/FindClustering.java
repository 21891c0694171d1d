package io.dynnibal.index.sampling;

import io.dynnibal.index.VectorMath;
import io.dynnibal.index.sgtree.SgNode;
import io.dynnibal.index.sgtree.SgTree;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * FindClustering (paper Alg. 2): an adaptive clustering of all targets for one query, coarse far from the query and
 * fine near it.
 *
 * <ol>
 *   <li>Start (Prop. 2): split subtrees, widest first, until every cluster's radius is at most
 *       {@code log(gamma) / (2 beta |x|)}, so that {@code P(y|x) / Q(y|x) <= gamma} for every target.
 *   <li>Refine (Alg. 2's loop): split, closest first, every cluster wider than {@code deepestRadius} that may hold a
 *       target within {@code deepestRadius} of the query ({@code d(x, rep) - radius <= deepestRadius}); with the
 *       tree's levels, {@code deepestRadius = b^m}.
 * </ol>
 *
 * Splitting a subtree replaces it by its node's own targets and one subtree per child, so the result always covers
 * every target exactly once. The paper fixes levels; cover radii serve the same bounds and are tighter. Both phases
 * stop at {@code maxClusters} (the frontier cap); {@link Partition#gammaBound()} reports the guarantee reached.
 */
public final class FindClustering {

  /**
   * @param beta score scale of the softmax {@code exp(beta <x, y>)}
   * @param gamma the allowed ratio {@code max P/Q} (Prop. 2), greater than 1
   * @param deepestRadius refine clusters near the query down to this radius ({@code b^m}); 0 refines to leaves
   * @param maxClusters the cap on the partition's size
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
      if (maxClusters < 1) {
        throw new IllegalArgumentException("maxClusters must be >= 1, got " + maxClusters);
      }
    }
  }

  private FindClustering() {}

  /** A block in the making: a subtree, or ({@code ownOnly}) what is left of one after its split. */
  private record Candidate(SgNode node, boolean ownOnly, double score, double distance) {
    double lowerBoundDistance() {
      return distance - node.radius();
    }
  }

  public static Partition find(SgTree tree, float[] query, Options options) {
    SgNode root = tree.root();
    if (root == null) {
      return new Partition(List.of(), new double[0], 1);
    }
    double queryNorm = VectorMath.norm(query);
    double startRadius = queryNorm == 0
        ? Double.POSITIVE_INFINITY
        : Math.log(options.gamma()) / (2 * options.beta() * queryNorm);

    List<Candidate> done = new ArrayList<>(); // own-target blocks and subtrees that need no further split
    PriorityQueue<Candidate> widest = new PriorityQueue<>(Comparator.comparingDouble(c -> -c.node().radius()));
    widest.add(candidate(root, query));
    int total = 1; // clusters in done + widest + closest
    while (!widest.isEmpty() && widest.peek().node().radius() > startRadius
        && total + widest.peek().node().childCount() <= options.maxClusters()) {
      total += split(widest.poll(), query, done, widest);
    }

    PriorityQueue<Candidate> closest =
        new PriorityQueue<>(Comparator.comparingDouble(Candidate::lowerBoundDistance));
    for (Candidate c : widest) {
      if (isNear(c, options.deepestRadius())) {
        closest.add(c);
      } else {
        done.add(c);
      }
    }
    while (!closest.isEmpty() && total + closest.peek().node().childCount() <= options.maxClusters()) {
      List<Candidate> children = new ArrayList<>();
      total += split(closest.poll(), query, done, children);
      for (Candidate c : children) {
        (isNear(c, options.deepestRadius()) ? closest : done).add(c);
      }
    }
    done.addAll(closest);

    List<Cluster> clusters = new ArrayList<>(done.size());
    double[] scores = new double[done.size()];
    double widestRadius = 0;
    for (Candidate c : done) {
      Cluster cluster = new Cluster(c.node(), c.ownOnly());
      scores[clusters.size()] = c.score();
      clusters.add(cluster);
      widestRadius = Math.max(widestRadius, cluster.radius());
    }
    return new Partition(clusters, scores, Math.exp(2 * options.beta() * queryNorm * widestRadius));
  }

  /** A subtree worth refining: wider than the deepest radius and possibly holding a target that close. */
  private static boolean isNear(Candidate c, double deepestRadius) {
    return c.node().childCount() > 0 && c.node().radius() > deepestRadius
        && c.lowerBoundDistance() <= deepestRadius;
  }

  /** Replaces a subtree by its own targets (into {@code done}) and its children (into {@code out}). */
  private static int split(Candidate c, float[] query, List<Candidate> done, Collection<Candidate> out) {
    done.add(new Candidate(c.node(), true, c.score(), c.distance()));
    for (int i = 0; i < c.node().childCount(); i++) {
      out.add(candidate(c.node().child(i), query));
    }
    return c.node().childCount();
  }

  private static Candidate candidate(SgNode node, float[] query) {
    return new Candidate(
        node, false, VectorMath.dot(query, node.vector()), VectorMath.distance(query, node.vector()));
  }
}
