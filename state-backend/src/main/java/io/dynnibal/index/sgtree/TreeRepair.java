package io.dynnibal.index.sgtree;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * UpdateSGTree (paper Alg. 3): after the cached vectors moved (each by at most {@code drift}),
 * rebuild only the subtrees whose structure broke, each under its own root (SG separation holds
 * between siblings only, so a rebuilt subtree re-attaches where it was).
 *
 * <p>Top down, each child's level is re-derived from its new distance to its parent (covering and
 * separation from the parent, on exact distances: one per node). A child whose level changed is
 * relabelled in place when that is still a valid tree (below its parent's level, above its own
 * children's): level boundaries are a factor b apart, so even a small drift moves many children
 * across one. A child that no longer fits (too far, or too close to a same-level sibling: mind
 * minus twice the drift, else the exact pairs) has its subtree's points inserted again from the
 * parent, locally; when the misfits hold most of a subtree, the subtree is rebuilt in bulk under
 * its own root instead, which is the paper's repair. {@link #repairAtLevel} also rebuilds every
 * subtree at or below a level, the paper's equivalent of a drift bound.
 *
 * <p>Bookkeeping after the rebuilds: {@link Mode#EXACT} recomputes maxd, radius and mind exactly
 * (O(n depth) distances); {@link Mode#BOUNDED} (the paper's fast bound check) keeps maxd + 2 drift
 * and mind - 2 drift as bounds and recomputes only the nested radii (O(n)). Both leave {@link
 * SgTree#checkInvariants()} clean; exact bounds make the samplers' partitions tighter.
 */
public final class TreeRepair {
  public enum Mode {
    EXACT,
    BOUNDED
  }

  /**
   * @param targets targets in the tree
   * @param subtreesRebuilt subtrees rebuilt in bulk under their own roots
   * @param subtreesReinserted misfit subtrees whose points were inserted again locally
   * @param targetsMoved distinct targets whose node was rebuilt or re-inserted
   */
  public record Report(
      long targets, long subtreesRebuilt, long subtreesReinserted, long targetsMoved) {
    /** The share of the index that had to be rebuilt: targets moved / targets. */
    public double rebuiltFraction() {
      return targets == 0 ? 0 : targetsMoved / (double) targets;
    }
  }

  private TreeRepair() {}

  public static Report repair(SgTree tree, double drift, Mode mode, long seed) {
    return repairAtLevel(tree, Integer.MIN_VALUE, drift, mode, seed);
  }

  /**
   * As {@link #repair}, and every subtree whose root's level is at most {@code level} is rebuilt
   * outright.
   */
  public static Report repairAtLevel(SgTree tree, int level, double drift, Mode mode, long seed) {
    try {
      return repairUnder(tree, level, drift, mode, seed);
    } finally {
      tree.changed(); // nodes are changed in place all through
    }
  }

  private static Report repairUnder(SgTree tree, int level, double drift, Mode mode, long seed) {
    if (!(drift >= 0) || Double.isInfinite(drift)) {
      throw new IllegalArgumentException("drift must be finite and >= 0, got " + drift);
    }
    SgNode root = tree.root();
    if (root == null) {
      return new Report(0, 0, 0, 0);
    }
    List<SgNode> all = tree.nodes();
    if (mode == Mode.BOUNDED) {
      for (SgNode node : all) {
        node.maxDistance += 2 * drift;
      }
    }
    SgTreeBuilder builder = new SgTreeBuilder(tree, seed);
    long rebuilt = 0;
    long reinserted = 0;
    Set<Integer> moved = new HashSet<>();
    Deque<SgNode> stack = new ArrayDeque<>(List.of(root));
    while (!stack.isEmpty()) {
      SgNode node = stack.pop();
      if (node != root && node.level <= level) {
        rebuilt++;
        rebuild(tree, builder, node, moved);
        continue;
      }
      List<SgNode> misfits = misfitChildren(tree, node, drift);
      long misfitPoints = 0;
      for (SgNode m : misfits) {
        misfitPoints += m.size;
      }
      if (2 * misfitPoints > node.size - node.ownTargetCount()) {
        rebuilt++; // most of the subtree moves anyway: one bulk rebuild under its own root is
        // cheaper
        rebuild(tree, builder, node, moved);
        continue;
      }
      for (SgNode misfit : misfits) {
        reinserted++;
        reinsert(tree, node, misfit, moved);
      }
      stack.addAll(node.children);
    }
    refreshBookkeeping(tree, mode, drift);
    return new Report(tree.size(), rebuilt, reinserted, moved.size());
  }

  /**
   * The children of {@code node} that no longer fit under it on the moved vectors: too far for its
   * level, or too close to a sibling of the same level (the smaller subtree of such a pair).
   * Children whose distance only moved them to another level are relabelled in place when that
   * keeps the level order, and stay.
   */
  private static List<SgNode> misfitChildren(SgTree tree, SgNode node, double drift) {
    List<SgNode> misfits = new ArrayList<>();
    int highest = Integer.MIN_VALUE;
    boolean relabelled = false;
    for (SgNode child : node.children) {
      double d = child.parentDistance();
      if (d > tree.scale(child.level + 1) || d <= tree.scale(child.level)) {
        int level = d == 0 ? Integer.MIN_VALUE : tree.levelFor(d);
        boolean fits =
            d > 0
                && (node.parent == null || level < node.level)
                && highestChildLevel(child) < level;
        if (!fits) {
          misfits.add(child);
          continue;
        }
        child.level = level;
        relabelled = true;
        if (node.parent == null && node.level <= level) {
          node.level = level + 1;
        }
      }
      highest = Math.max(highest, child.level);
    }
    double slack =
        1e-9 * (1 + tree.scale(highest)); // rounding must not let a boundary pair through
    if (node.children.size() < 2
        || (!relabelled && node.minChildDistance - 2 * drift - slack > tree.scale(highest))) {
      return misfits; // even the closest pair, moved by 2 drift, is farther apart than any sibling
      // level requires
    }
    Set<SgNode> out = Collections.newSetFromMap(new IdentityHashMap<>());
    out.addAll(misfits);
    for (int i = 0; i < node.children.size(); i++) {
      SgNode a = node.children.get(i);
      for (int j = i + 1; j < node.children.size(); j++) {
        SgNode b = node.children.get(j);
        if (a.level == b.level
            && !out.contains(a)
            && !out.contains(b)
            && a.distanceTo(b) <= tree.scale(a.level)) {
          SgNode smaller = a.size <= b.size ? a : b;
          out.add(smaller);
          misfits.add(smaller);
        }
      }
    }
    return misfits;
  }

  /**
   * Takes a child's subtree out of {@code node} and inserts its points again from there (climbing
   * as covering requires): the local repair for one misfit child. Records the targets moved.
   */
  private static void reinsert(SgTree tree, SgNode node, SgNode child, Set<Integer> movedTargets) {
    node.children.remove(child);
    for (SgNode a = node; a != null; a = a.parent) {
      a.size -= child.size;
    }
    List<SgNode> moved = new ArrayList<>(List.of(child));
    for (int i = 0; i < moved.size(); i++) {
      moved.addAll(moved.get(i).children);
    }
    for (SgNode m : moved) {
      for (int i = 0; i < m.ownTargetCount(); i++) {
        movedTargets.add(m.ownTarget(i));
      }
      tree.insertPoint(node, m.vector(), m.ownTargets(), m.ownTargetCount());
    }
    tree.pruneHollow(node); // a hollow node none of the points came back under
  }

  private static int highestChildLevel(SgNode node) {
    int highest = Integer.MIN_VALUE;
    for (SgNode child : node.children) {
      highest = Math.max(highest, child.level);
    }
    return highest;
  }

  /**
   * Rebuilds the subtree below {@code node} over its descendants' points, recording the targets
   * moved. Descendants that drifted beyond what the node can cover at its level leave the subtree
   * and are inserted again from the node's parent (the root covers everything).
   */
  private static void rebuild(
      SgTree tree, SgTreeBuilder builder, SgNode node, Set<Integer> movedTargets) {
    List<SgNode> descendants = new ArrayList<>();
    for (int i = 0; i < node.children.size(); i++) {
      descendants.add(node.children.get(i));
    }
    for (int i = 0; i < descendants.size(); i++) {
      descendants.addAll(descendants.get(i).children);
    }
    Set<SgNode> escapees = Collections.newSetFromMap(new IdentityHashMap<>());
    int points = 0;
    for (SgNode d : descendants) {
      for (int i = 0; i < d.ownTargetCount(); i++) {
        movedTargets.add(d.ownTarget(i));
      }
      if (node.parent != null && node.distanceTo(d) > tree.scale(node.level)) {
        escapees.add(d);
      } else {
        points += d.ownTargetCount();
      }
    }
    int[] targets = new int[points];
    SgTreeBuilder.Points coded = new SgTreeBuilder.Points(new byte[points][], new float[points]);
    int[] members = new int[points];
    int k = 0;
    for (SgNode d : descendants) {
      if (escapees.contains(d)) {
        continue;
      }
      for (int i = 0; i < d.ownTargetCount(); i++) {
        targets[k] = d.ownTarget(i);
        coded.codes()[k] = d.codes;
        coded.scales()[k] = d.scale;
        members[k] = k;
        k++;
      }
    }
    if (!node.children.isEmpty()) {
      node.children.clear();
    }
    node.minChildDistance = Double.POSITIVE_INFINITY;
    for (SgNode e : escapees) {
      for (SgNode a = node.parent; a != null; a = a.parent) {
        a.size -= e.ownTargetCount(); // node's own size is recomputed by the rebuild
      }
    }
    builder.buildUnder(node, targets, coded, members);
    SgNode parent = node.parent;
    // Hollow, with every point below it escaped (or hollow too): it leaves, maybe with hollow
    // ancestors; the escapees then start from the lowest node still in the tree.
    SgNode kept = tree.pruneHollow(node);
    SgNode from = kept == node ? parent : kept;
    for (SgNode e : escapees) {
      tree.insertPoint(
          from != null ? from : tree.root(), e.vector(), e.ownTargets(), e.ownTargetCount());
    }
  }

  private static void refreshBookkeeping(SgTree tree, Mode mode, double drift) {
    List<SgNode> all = tree.nodes(); // parents before children
    if (mode == Mode.EXACT) {
      for (SgNode node : all) {
        node.maxDistance = 0;
      }
      for (SgNode node : all) {
        for (SgNode a = node.parent; a != null; a = a.parent) {
          a.maxDistance = Math.max(a.maxDistance, a.distanceTo(node));
        }
      }
    }
    for (int i = all.size() - 1; i >= 0; i--) {
      SgNode node = all.get(i);
      node.radius = 0;
      double mind = Double.POSITIVE_INFINITY;
      for (int c = 0; c < node.children.size(); c++) {
        SgNode child = node.children.get(c);
        node.radius = Math.max(node.radius, child.parentDistance() + child.radius);
        if (mode == Mode.EXACT) {
          for (int s = c + 1; s < node.children.size(); s++) {
            mind = Math.min(mind, child.distanceTo(node.children.get(s)));
          }
        }
      }
      if (mode == Mode.EXACT) {
        node.minChildDistance = mind;
      } else {
        node.minChildDistance = Math.max(0, node.minChildDistance - 2 * drift);
        if (node.children.isEmpty()) {
          node.maxDistance = 0;
        }
      }
      node.maxDistance = Math.min(node.maxDistance, node.radius);
    }
  }
}
