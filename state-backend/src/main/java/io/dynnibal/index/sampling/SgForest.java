package io.dynnibal.index.sampling;

import io.dynnibal.index.sgtree.SgTree;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;

/**
 * A forest of T SG trees over disjoint, equally sized parts of the targets (the paper uses about
 * 100; in the streaming job one tree is one shard). Each tree is sampled independently and the
 * candidates are merged by their unnormalised probability {@code exp(beta <x, y>)}, keeping the
 * highest distinct ones (paper §5).
 */
public final class SgForest {
  private final List<SgTree> trees;
  private final Map<Integer, Integer> treeOfTarget = new HashMap<>();

  private SgForest(List<SgTree> trees) {
    this.trees = trees;
  }

  /**
   * Splits the targets into {@code treeCount} parts of equal size (a seeded shuffle) and
   * bulk-builds each.
   */
  public static SgForest build(
      int dimension, double base, int[] targets, float[][] vectors, int treeCount, long seed) {
    if (treeCount < 1) {
      throw new IllegalArgumentException("a forest needs at least one tree, got " + treeCount);
    }
    int[] order = new int[targets.length];
    Arrays.setAll(order, i -> i);
    SplittableRandom random = new SplittableRandom(seed);
    for (int i = order.length - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    List<SgTree> trees = new ArrayList<>(treeCount);
    SgForest forest = new SgForest(trees);
    java.util.Set<Integer> distinct = new java.util.HashSet<>();
    for (int target : targets) {
      if (!distinct.add(target)) {
        throw new IllegalArgumentException("target " + target + " appears twice");
      }
    }
    for (int t = 0; t < treeCount; t++) {
      int from = (int) ((long) targets.length * t / treeCount);
      int to = (int) ((long) targets.length * (t + 1) / treeCount);
      int[] ids = new int[to - from];
      float[][] vs = new float[to - from][];
      for (int i = from; i < to; i++) {
        ids[i - from] = targets[order[i]];
        vs[i - from] = vectors[order[i]];
        forest.treeOfTarget.put(ids[i - from], t);
      }
      trees.add(SgTree.build(dimension, base, ids, vs, random.nextLong()));
    }
    return forest;
  }

  public List<SgTree> trees() {
    return List.copyOf(trees);
  }

  public int size() {
    return treeOfTarget.size();
  }

  /** Adds a target to the smallest tree, which keeps the trees of equal size. */
  public void insert(int target, float[] vector) {
    if (treeOfTarget.containsKey(target)) {
      throw new IllegalArgumentException(
          "target " + target + " is already in tree " + treeOfTarget.get(target));
    }
    int smallest = 0;
    for (int t = 1; t < trees.size(); t++) {
      if (trees.get(t).size() < trees.get(smallest).size()) {
        smallest = t;
      }
    }
    trees.get(smallest).insert(target, vector);
    treeOfTarget.put(target, smallest);
  }

  public boolean delete(int target) {
    Integer t = treeOfTarget.remove(target);
    return t != null && trees.get(t).delete(target);
  }

  /**
   * {@code count} negatives: each tree contributes up to {@code count} samples of its own softmax,
   * and the {@code count} distinct candidates of highest logit win.
   */
  public Samples sample(NegativeSampler sampler, float[] query, int count, RandomGenerator random) {
    Map<Integer, Double> best = new HashMap<>();
    long proposals = 0;
    long accepted = 0;
    double logMass = Double.NEGATIVE_INFINITY; // the trees' masses add up
    for (SgTree tree : trees) {
      Samples s = sampler.sample(tree, query, count, random);
      proposals += s.proposals();
      accepted += s.accepted();
      logMass = logSumExp(logMass, s.logMass());
      for (int i = 0; i < s.size(); i++) {
        best.put(s.targets()[i], s.logits()[i]);
      }
    }
    return Samples.best(best, count, proposals, accepted, logMass);
  }

  /**
   * log(e^a + e^b), NaN when either is (a tree without an estimate leaves the forest without one).
   */
  private static double logSumExp(double a, double b) {
    if (Double.isNaN(a) || Double.isNaN(b)) {
      return Double.NaN;
    }
    double max = Math.max(a, b);
    return max == Double.NEGATIVE_INFINITY
        ? max
        : max + Math.log(Math.exp(a - max) + Math.exp(b - max));
  }
}
