package io.dynnibal.index.sgtree;

import io.dynnibal.index.VectorMath;

/**
 * How a search ranks targets, as a score to maximise, and the best score any target of a subtree
 * can reach given the subtree's representative score and cover radius (Cauchy-Schwarz for the inner
 * product, the triangle inequality for the distance).
 */
public enum Similarity {
  INNER_PRODUCT {
    @Override
    public double score(float[] query, float[] vector) {
      return VectorMath.dot(query, vector);
    }

    @Override
    public double score(float[] query, SgNode node) {
      return node.dot(query);
    }

    @Override
    public double bound(double score, double radius, double queryNorm) {
      return score + queryNorm * radius;
    }
  },
  /** Scores are negated distances, so larger is closer. */
  EUCLIDEAN {
    @Override
    public double score(float[] query, float[] vector) {
      return -VectorMath.distance(query, vector);
    }

    @Override
    public double score(float[] query, SgNode node) {
      return -node.distanceTo(query);
    }

    @Override
    public double bound(double score, double radius, double queryNorm) {
      return Math.min(0, score + radius);
    }
  };

  public abstract double score(float[] query, float[] vector);

  /** {@code score(query, node.vector())}, bit for bit, without decoding the node's vector. */
  public abstract double score(float[] query, SgNode node);

  /**
   * The largest score a target within {@code radius} of a vector scoring {@code score} can have.
   */
  public abstract double bound(double score, double radius, double queryNorm);
}
