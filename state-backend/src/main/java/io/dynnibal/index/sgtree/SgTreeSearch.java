package io.dynnibal.index.sgtree;

import io.dynnibal.index.VectorMath;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * k-nearest-neighbour search over an {@link SgTree}: exact (branch and bound on cover radii) and
 * beam search.
 */
public final class SgTreeSearch {
  private SgTreeSearch() {}

  private record Entry(SgNode node, double score, double bound) {}

  /**
   * The exact top {@code k} targets by {@code similarity}, best first. Subtrees are visited best
   * bound first and skipped once their bound cannot beat the k-th score found, so the answer equals
   * brute force.
   */
  public static List<Neighbor> exact(SgTree tree, float[] query, int k, Similarity similarity) {
    PriorityQueue<Neighbor> best = new PriorityQueue<>(Comparator.comparingDouble(Neighbor::score));
    SgNode root = tree.root();
    if (root == null || k <= 0) {
      return List.of();
    }
    double queryNorm = VectorMath.norm(query);
    PriorityQueue<Entry> frontier =
        new PriorityQueue<>(Comparator.comparingDouble(Entry::bound).reversed());
    frontier.add(entry(root, query, queryNorm, similarity));
    while (!frontier.isEmpty()) {
      Entry e = frontier.poll();
      if (best.size() == k && e.bound() <= best.peek().score()) {
        break;
      }
      offerOwn(best, e, k);
      for (SgNode child : e.node().children) {
        Entry c = entry(child, query, queryNorm, similarity);
        if (best.size() < k || c.bound() > best.peek().score()) {
          frontier.add(c);
        }
      }
    }
    return sortedBestFirst(best);
  }

  /**
   * Approximate top {@code k}: expands the tree in rounds, keeping only the {@code beam} most
   * promising subtrees (by bound) per round. Cost grows with the beam, not with the number of
   * targets.
   */
  public static List<Neighbor> beam(
      SgTree tree, float[] query, int k, int beam, Similarity similarity) {
    PriorityQueue<Neighbor> best = new PriorityQueue<>(Comparator.comparingDouble(Neighbor::score));
    SgNode root = tree.root();
    if (root == null || k <= 0) {
      return List.of();
    }
    double queryNorm = VectorMath.norm(query);
    List<Entry> frontier = List.of(entry(root, query, queryNorm, similarity));
    while (!frontier.isEmpty()) {
      List<Entry> next = new ArrayList<>();
      for (Entry e : frontier) {
        offerOwn(best, e, k);
        for (SgNode child : e.node().children) {
          next.add(entry(child, query, queryNorm, similarity));
        }
      }
      next.sort(Comparator.comparingDouble(Entry::bound).reversed());
      frontier = next.size() > beam ? next.subList(0, beam) : next;
    }
    return sortedBestFirst(best);
  }

  private static Entry entry(SgNode node, float[] query, double queryNorm, Similarity similarity) {
    double score = similarity.score(query, node);
    return new Entry(node, score, similarity.bound(score, node.maxDistance, queryNorm));
  }

  private static void offerOwn(PriorityQueue<Neighbor> best, Entry e, int k) {
    for (int i = 0; i < e.node().ownTargetCount(); i++) {
      if (best.size() < k) {
        best.add(new Neighbor(e.node().ownTarget(i), e.score()));
      } else if (e.score() > best.peek().score()) {
        best.poll();
        best.add(new Neighbor(e.node().ownTarget(i), e.score()));
      }
    }
  }

  private static List<Neighbor> sortedBestFirst(PriorityQueue<Neighbor> best) {
    List<Neighbor> out = new ArrayList<>(best);
    out.sort(Comparator.comparingDouble(Neighbor::score).reversed());
    return out;
  }
}
