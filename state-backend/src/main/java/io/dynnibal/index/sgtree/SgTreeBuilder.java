package io.dynnibal.index.sgtree;

import io.dynnibal.index.Int8Quantizer;
import io.dynnibal.index.VectorMath;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Bulk construction of an {@link SgTree}, top down: the root is an approximate medoid; under each
 * center, children are chosen level by level by farthest-first traversal, so that siblings at one
 * level are separated by more than {@code b^level} and every point is covered by its nearest
 * center. Each point then continues under the center it was assigned to. Radii are exact and mind
 * is computed over all pairs of children.
 */
final class SgTreeBuilder {
  private static final int MEDOID_SAMPLE = 128;

  private final SgTree tree;
  private final SplittableRandom random;

  SgTreeBuilder(SgTree tree, long seed) {
    this.tree = tree;
    this.random = new SplittableRandom(seed);
  }

  /** A center and the points it must cover (indices into the input, the center itself excluded). */
  private record Task(SgNode node, int[] members) {}

  void build(int[] targets, float[][] vectors) {
    if (tree.root() != null) {
      throw new IllegalStateException("bulk build needs an empty tree");
    }
    if (targets.length != vectors.length) {
      throw new IllegalArgumentException(
          targets.length + " targets but " + vectors.length + " vectors");
    }
    Set<Integer> seen = new HashSet<>();
    for (int i = 0; i < targets.length; i++) {
      tree.validate(vectors[i], targets[i]);
      if (!seen.add(targets[i])) {
        throw new IllegalArgumentException("target " + targets[i] + " appears twice");
      }
    }
    if (targets.length == 0) {
      return;
    }
    Points points = new Points(new byte[vectors.length][], new float[vectors.length]);
    for (int i = 0; i < vectors.length; i++) {
      points.scales[i] = Int8Quantizer.scaleFor(vectors[i]);
      points.codes[i] = new byte[vectors[i].length];
      Int8Quantizer.encode(vectors[i], points.scales[i], points.codes[i]);
    }
    int medoid = approximateMedoid(points);
    SgNode root = newNode(medoid, targets, points);
    root.level = Integer.MIN_VALUE / 2;
    tree.setRoot(root);
    int[] rest = new int[targets.length - 1];
    for (int i = 0, j = 0; i < targets.length; i++) {
      if (i != medoid) {
        rest[j++] = i;
      }
    }
    buildUnder(root, targets, points, rest);
    tree.changed(); // the nodes were filled in after they were attached
  }

  /**
   * The points of a build as the tree holds vectors ({@link Int8Quantizer}): point {@code i} is
   * {@code codes[i]} at {@code scales[i]}. Their distances are summed in integers, which is most of
   * a build's work.
   */
  record Points(byte[][] codes, float[] scales) {
    double distance(SgNode node, int i) {
      return VectorMath.distance(node.codes, node.scale, codes[i], scales[i]);
    }

    double distance(int i, int j) {
      return VectorMath.distance(codes[i], scales[i], codes[j], scales[j]);
    }
  }

  /**
   * Builds the subtree below {@code center} (which keeps its own targets, and its place and level
   * in the tree) over the given points, indices into {@code targets}/{@code points}. The center
   * must have no children. Sizes, maxd, radius and mind come out exact inside the subtree;
   * ancestors are the caller's business.
   */
  void buildUnder(SgNode center, int[] targets, Points points, int[] members) {
    if (!center.children.isEmpty()) {
      throw new IllegalStateException("rebuild under a node that still has children");
    }
    center.maxDistance = 0;
    center.radius = 0;
    List<SgNode> order = new ArrayList<>();
    Deque<Task> tasks = new ArrayDeque<>();
    tasks.push(new Task(center, members));
    while (!tasks.isEmpty()) {
      Task task = tasks.pop();
      order.add(task.node());
      split(task, targets, points, tasks);
    }
    // maxd: every point raises the maxd of each of its ancestors within the subtree to its distance
    // from them.
    for (SgNode node : order) {
      for (SgNode a = node.parent; node != center && a != center.parent; a = a.parent) {
        a.maxDistance = Math.max(a.maxDistance, a.distanceTo(node));
      }
    }
    // Children were built after parents: finish sizes and radii bottom up.
    for (int i = order.size() - 1; i >= 0; i--) {
      SgNode node = order.get(i);
      node.size = node.ownTargetCount();
      node.radius = 0;
      for (SgNode child : node.children) {
        node.size += child.size;
        node.radius = Math.max(node.radius, child.parentDistance() + child.radius);
      }
      node.minChildDistance = minPairwise(node.children);
    }
  }

  private void split(Task task, int[] targets, Points points, Deque<Task> tasks) {
    SgNode center = task.node();
    int[] members = task.members();
    int n = members.length;
    double[] toCenter = new double[n];
    double[] toCenters =
        new double[n]; // to the center or the nearest child made so far: farthest-first key
    double[] toOwner = new double[n]; // to the center or child the point is assigned to
    int[] owner = new int[n]; // -1: stays with the center; else index into children of this call
    List<SgNode> created = new ArrayList<>();
    // Points not yet under a child, as indices into members (an int array: at a large root the
    // loops below pass over them once per child).
    int[] remaining = new int[n];
    int remainingCount = 0;
    for (int i = 0; i < n; i++) {
      toCenter[i] = points.distance(center, members[i]);
      if (toCenter[i] == 0) {
        center.addTarget(targets[members[i]]);
        tree.register(center, new int[] {targets[members[i]]}, 1);
        owner[i] = -2; // a duplicate of the center
      } else {
        owner[i] = -1;
        remaining[remainingCount++] = i;
      }
    }
    while (remainingCount > 0) {
      double farthest = 0;
      for (int r = 0; r < remainingCount; r++) {
        farthest = Math.max(farthest, toCenter[remaining[r]]);
      }
      int level = tree.levelFor(farthest);
      double cover = tree.scale(level);
      int firstNew = created.size();
      for (int r = 0; r < remainingCount; r++) {
        int i = remaining[r];
        toCenters[i] = toCenter[i];
        // A point beyond b^level cannot stay under the center at this level: any covering child
        // takes it.
        toOwner[i] = toCenter[i] > cover ? Double.POSITIVE_INFINITY : toCenter[i];
      }
      while (true) {
        // Farthest-first among points that must live in a child at this level and no new child
        // covers yet.
        int pick = -1;
        for (int r = 0; r < remainingCount; r++) {
          int i = remaining[r];
          if (owner[i] == -1
              && toCenter[i] > cover
              && (pick < 0 || toCenters[i] > toCenters[pick])) {
            pick = i;
          }
        }
        if (pick < 0) {
          break;
        }
        SgNode child = newNode(members[pick], targets, points);
        child.level = level;
        tree.attach(center, child, toCenter[pick]);
        int childIndex = created.size();
        created.add(child);
        owner[pick] = -3; // the child's own point
        for (int r = 0; r < remainingCount; r++) {
          int i = remaining[r];
          if (owner[i] == -3) {
            continue;
          }
          double d = points.distance(members[pick], members[i]);
          toCenters[i] = Math.min(toCenters[i], d);
          if (d <= cover && d < toOwner[i]) {
            toOwner[i] = d;
            owner[i] = childIndex;
          }
        }
      }
      int[] groupSizes = new int[created.size() - firstNew];
      for (int r = 0; r < remainingCount; r++) {
        if (owner[remaining[r]] >= firstNew) {
          groupSizes[owner[remaining[r]] - firstNew]++;
        }
      }
      int[][] groups = new int[groupSizes.length][];
      for (int c = 0; c < groups.length; c++) {
        groups[c] = new int[groupSizes[c]];
        groupSizes[c] = 0;
      }
      int stay = 0;
      for (int r = 0; r < remainingCount; r++) {
        int i = remaining[r];
        if (owner[i] == -1) {
          remaining[stay++] = i; // in place: stay <= r, and r is read before it is overwritten
        } else if (owner[i] >= firstNew) {
          int c = owner[i] - firstNew;
          groups[c][groupSizes[c]++] = members[i];
        }
      }
      for (int c = 0; c < groups.length; c++) {
        tasks.push(new Task(created.get(firstNew + c), groups[c]));
      }
      remainingCount = stay;
    }
  }

  private SgNode newNode(int index, int[] targets, Points points) {
    SgNode node =
        new SgNode(
            points.codes[index].clone(), points.scales[index], new int[] {targets[index]}, 1);
    tree.register(node, new int[] {targets[index]}, 1);
    return node;
  }

  /**
   * The sampled point with the least total distance to a sample: a cheap, robust center for the
   * root.
   */
  private int approximateMedoid(Points points) {
    int n = points.scales.length;
    int samples = Math.min(n, MEDOID_SAMPLE);
    int[] candidates = random.ints(samples, 0, n).toArray();
    int[] references = random.ints(samples, 0, n).toArray();
    int best = candidates[0];
    double bestCost = Double.POSITIVE_INFINITY;
    for (int c : candidates) {
      double cost = 0;
      for (int r : references) {
        cost += points.distance(c, r);
      }
      if (cost < bestCost) {
        bestCost = cost;
        best = c;
      }
    }
    return best;
  }

  private static double minPairwise(List<SgNode> nodes) {
    double min = Double.POSITIVE_INFINITY;
    for (int i = 0; i < nodes.size(); i++) {
      for (int j = i + 1; j < nodes.size(); j++) {
        min = Math.min(min, nodes.get(i).distanceTo(nodes.get(j)));
      }
    }
    return min;
  }
}
