package io.dynnibal.index.sampling;

import io.dynnibal.index.VectorMath;
import io.dynnibal.index.sgtree.SgNode;
import io.dynnibal.index.sgtree.SgTree;
import java.util.random.RandomGenerator;

/**
 * Exact sampling from the softmax {@code P(y|x) ∝ exp(beta <x, y>)} by rejection down the tree
 * (paper Alg. 1).
 *
 * <p>Every subtree {@code n} gets an envelope {@code E(n) = size(n) * exp(beta (<x, n> + |x|
 * radius(n)))}, which is at least the true mass of its targets (Cauchy-Schwarz), and because a
 * child's radius ball lies inside its parent's, the envelopes nest: own targets + children's
 * envelopes {@code <= E(n)}. An attempt picks a cluster of the partition by envelope, then walks
 * down: at node {@code n} it returns an own target with probability {@code own mass / E(n)} (own
 * targets share {@code n}'s vector, so their mass is exact), moves to child {@code c} with
 * probability {@code E(c) / E(n)}, and otherwise restarts (Alg. 1's restart option). The envelopes
 * telescope, so an attempt returns target y with probability {@code exp(beta <x, y>) / sum of
 * envelopes}: exactly P, whatever the partition. Alg. 1 bounds with the level's {@code b^l}; cover
 * radii are tighter.
 *
 * <p>The price of exactness is restarts: an attempt succeeds with probability {@code Z / sum of
 * envelopes}, roughly {@code 1 / gamma} for a partition whose {@link Partition#gammaBound()} is
 * gamma, and cover radii (which add up down the tree) are loose near the root. Start from a fine
 * partition: FindClustering with gamma of 2 to 100.
 */
public final class RejectionSampler implements NegativeSampler {
  private final FindClustering.Options clustering;
  private final long maxAttemptsPerSample;

  /**
   * @param clustering the starting partition (finer: more work per query, fewer restarts)
   * @param maxAttemptsPerSample give up (with an exception) after this many restarts for one sample
   */
  public RejectionSampler(FindClustering.Options clustering, long maxAttemptsPerSample) {
    this.clustering = clustering;
    this.maxAttemptsPerSample = maxAttemptsPerSample;
  }

  @Override
  public Prepared prepare(SgTree tree, float[] query, float[] position) {
    Partition partition = FindClustering.find(tree, query, position, clustering);
    if (partition.size() == 0) {
      return (count, random) -> new Samples(new int[0], new double[0], 0, 0);
    }
    double beta = clustering.beta();
    double queryNorm = VectorMath.norm(query);
    int k = partition.size();
    double[] logEnvelope = new double[k];
    double shift = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < k; i++) {
      Cluster c = partition.clusters().get(i);
      logEnvelope[i] =
          Math.log(c.size())
              + beta * (partition.representativeScores()[i] + queryNorm * c.nestedRadius());
      shift = Math.max(shift, logEnvelope[i]);
    }
    double[] envelope = new double[k];
    for (int i = 0; i < k; i++) {
      envelope[i] = Math.exp(logEnvelope[i] - shift);
    }
    CumulativeWeights clusters = new CumulativeWeights(envelope);
    double envelopeShift = shift;
    return (count, random) ->
        count == 0
            ? new Samples(new int[0], new double[0], 0, 0)
            : sample(
                tree,
                partition,
                envelope,
                clusters,
                envelopeShift,
                query,
                queryNorm,
                count,
                random);
  }

  private Samples sample(
      SgTree tree,
      Partition partition,
      double[] envelope,
      CumulativeWeights clusters,
      double shift,
      float[] query,
      double queryNorm,
      int count,
      RandomGenerator random) {
    double beta = clustering.beta();
    int[] targets = new int[count];
    double[] logits = new double[count];
    long attempts = 0;
    for (int s = 0; s < count; s++) {
      long attemptsForThis = 0;
      int found = -1;
      while (found < 0) {
        if (++attemptsForThis > maxAttemptsPerSample) {
          throw new IllegalStateException(
              "no sample accepted in "
                  + maxAttemptsPerSample
                  + " attempts; the partition is too coarse for beta="
                  + beta
                  + " (gamma bound "
                  + partition.gammaBound()
                  + "); use FindClustering with a smaller gamma");
        }
        attempts++;
        int i = clusters.draw(random);
        found =
            attempt(
                partition.clusters().get(i),
                partition.representativeScores()[i],
                envelope[i],
                query,
                queryNorm,
                beta,
                shift,
                random);
      }
      targets[s] = found;
      logits[s] = beta * tree.nodeOf(found).dot(query);
    }
    // An attempt succeeds with probability Z / sum of envelopes: successes per attempt estimate Z.
    double logMass = shift + Math.log(clusters.total()) + Math.log(count / (double) attempts);
    return new Samples(targets, logits, attempts, count, logMass);
  }

  /**
   * One walk down from a cluster; the accepted target, or -1 to restart. Each step draws afresh: it
   * needs only the conditional probabilities own / E(n) and E(c) / E(n), and a fresh number keeps
   * full resolution for tiny ones.
   */
  private static int attempt(
      Cluster cluster,
      double score,
      double envelope,
      float[] query,
      double queryNorm,
      double beta,
      double shift,
      RandomGenerator random) {
    SgNode node = cluster.node();
    while (true) {
      double u = random.nextDouble() * envelope;
      double own = node.ownTargetCount() * Math.exp(beta * score - shift);
      if (u < own) {
        return node.ownTarget(random.nextInt(node.ownTargetCount()));
      }
      u -= own;
      if (cluster.ownOnly()) {
        return -1; // cannot happen: an own-only envelope is exact
      }
      SgNode next = null;
      double nextScore = 0;
      for (int i = 0; i < node.childCount() && next == null; i++) {
        SgNode child = node.child(i);
        double childScore = child.dot(query);
        double childEnvelope =
            child.size() * Math.exp(beta * (childScore + queryNorm * child.radius()) - shift);
        if (u < childEnvelope) {
          next = child;
          nextScore = childScore;
          envelope = childEnvelope;
        } else {
          u -= childEnvelope;
        }
      }
      if (next == null) {
        return -1; // the slack between the envelope and what lies under it: restart
      }
      node = next;
      score = nextScore;
    }
  }
}
