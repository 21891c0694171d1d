package io.dynnibal.index.sgtree;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/** The SG tree's invariants, checked against true distances (for tests and assertions). */
final class SgTreeInvariants {
  private SgTreeInvariants() {}

  /**
   * Every violated invariant of {@code tree}, one line each (empty when the tree is sound): levels,
   * covering, both separations, radius and mind bounds against the true distances, sizes, parent
   * links, and the target index.
   */
  static List<String> check(SgTree tree, SgNode root, NodesByTarget nodeOfTarget) {
    List<String> violations = new ArrayList<>();
    if (root == null) {
      if (!nodeOfTarget.isEmpty()) {
        violations.add("empty tree but " + nodeOfTarget.size() + " targets indexed");
      }
      return violations;
    }
    if (root.parent != null) {
      violations.add("root has a parent");
    }
    int indexed = 0;
    Deque<SgNode> stack = new ArrayDeque<>(List.of(root));
    while (!stack.isEmpty()) {
      SgNode p = stack.pop();
      String at = "node " + (p.ownTargetCount() > 0 ? p.ownTarget(0) : "?") + "@" + p.level;
      if (p.ownTargetCount() < 1 && p.children.isEmpty()) {
        violations.add(at + ": a leaf that holds no target");
      }
      for (int i = 0; i < p.ownTargetCount(); i++) {
        if (nodeOfTarget.get(p.ownTarget(i)) != p) {
          violations.add(at + ": target " + p.ownTarget(i) + " is not indexed to this node");
        }
        indexed++;
      }
      int size = p.ownTargetCount();
      double minChild = Double.POSITIVE_INFINITY;
      for (int i = 0; i < p.children.size(); i++) {
        SgNode c = p.children.get(i);
        size += c.size;
        double d = p.distanceTo(c);
        String edge =
            at + " -> child " + (c.ownTargetCount() > 0 ? c.ownTarget(0) : "?") + "@" + c.level;
        if (c.parent != p) {
          violations.add(edge + ": wrong parent link");
        }
        if (c.level >= p.level) {
          violations.add(edge + ": child level not below parent level");
        }
        if (d > tree.scale(c.level + 1)) {
          violations.add(
              edge + ": covering broken, d=" + d + " > b^(l+1)=" + tree.scale(c.level + 1));
        }
        if (d <= tree.scale(c.level)) {
          violations.add(
              edge + ": separation from parent broken, d=" + d + " <= b^l=" + tree.scale(c.level));
        }
        if (p.radius < d + c.radius - 1e-9 * (1 + p.radius)) {
          violations.add(edge + ": radius " + p.radius + " < d + child radius " + (d + c.radius));
        }
        double farthest = farthestDescendant(p, c);
        if (p.maxDistance < farthest - 1e-9 * (1 + farthest)) {
          violations.add(edge + ": maxd " + p.maxDistance + " below a descendant at " + farthest);
        }
        for (int j = i + 1; j < p.children.size(); j++) {
          SgNode s = p.children.get(j);
          double ds = c.distanceTo(s);
          minChild = Math.min(minChild, ds);
          if (s.level == c.level && ds <= tree.scale(c.level)) {
            violations.add(
                edge + ": sibling " + s.ownTarget(0) + " at the same level only " + ds + " away");
          }
        }
        stack.push(c);
      }
      if (p.minChildDistance > minChild + 1e-9 * (1 + minChild)) {
        violations.add(at + ": mind " + p.minChildDistance + " above the true " + minChild);
      }
      if (size != p.size) {
        violations.add(at + ": size " + p.size + " but subtree holds " + size);
      }
    }
    if (indexed != nodeOfTarget.size()) {
      violations.add(
          "the tree holds " + indexed + " targets but " + nodeOfTarget.size() + " are indexed");
    }
    return violations;
  }

  private static double farthestDescendant(SgNode from, SgNode subtree) {
    double farthest = from.distanceTo(subtree);
    for (SgNode n : SgTree.descendants(subtree)) {
      farthest = Math.max(farthest, from.distanceTo(n));
    }
    return farthest;
  }
}
