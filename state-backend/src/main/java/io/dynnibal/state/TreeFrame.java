package io.dynnibal.state;

import io.dynnibal.index.VectorMath;
import io.dynnibal.index.nystrom.CacheMap;
import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.CommonOps_DDRM;
import org.ejml.dense.row.factory.DecompositionFactory_DDRM;
import org.ejml.interfaces.decomposition.SingularValueDecomposition_F64;

/**
 * The coordinates a shard's SG tree holds its vectors in: a target's current cache vector is {@code
 * F x} for its tree vector {@code x}. A model update's map {@code A} then moves the whole tree by
 * composing {@code F <- A F} (one d' x d' product) instead of moving every vector and repairing
 * what broke; queries are carried into the tree's coordinates instead ({@code F^T q}), so every
 * score is exact: {@code <F^T q, x> = <q, F x>}.
 *
 * <p>The tree stays a valid metric tree of its own vectors, so every bound the samplers use holds
 * in its coordinates (a score's spread over a cluster is at most {@code |F^T q| maxd}) and the
 * samplers stay exact. What a frame costs is tightness: the more {@code F} stretches the data in
 * some directions against others (its distortion, {@link ShardIndex} measures it on the tree's own
 * edges), the looser those bounds are against a tree built in current coordinates. Past {@link
 * #MAX_DISTORTION} a shard applies the frame to its vectors instead, which resets it.
 *
 * <p>Maps between Nyström caches are often singular (directions no cached vector uses, e.g. below
 * the whitening's eigenvalue floor), so a new vector enters the tree by the pseudo-inverse, and
 * only when it lies in what the frame reaches ({@link #toTree} returns null otherwise).
 *
 * <p>Immutable.
 */
public final class TreeFrame {
  /**
   * The largest stretch ratio of the tree's edges (over the edges sampled) a shard keeps a frame
   * for: a frame that stretches some edges 4 times more than others loosens score bounds about that
   * much against a tree built in current coordinates.
   */
  public static final double MAX_DISTORTION = 4;

  /** Singular values below this share of the largest count as zero in the pseudo-inverse. */
  static final double PSEUDO_INVERSE_CUTOFF = 1e-3;

  /** A vector the frame reaches is reproduced to this share of its norm. */
  static final double REACH_TOLERANCE = 1e-3;

  private final int dimension;
  private final double[] forward; // F, row-major; null for the identity
  private final double[] pseudoInverse; // F^+, row-major; null for the identity

  private TreeFrame(int dimension, double[] forward, double[] pseudoInverse) {
    this.dimension = dimension;
    this.forward = forward;
    this.pseudoInverse = pseudoInverse;
  }

  public static TreeFrame identity(int dimension) {
    return new TreeFrame(dimension, null, null);
  }

  public boolean isIdentity() {
    return forward == null;
  }

  /** This frame followed by {@code map}: {@code A F}. */
  public TreeFrame then(CacheMap map) {
    if (map.dimension() != dimension) {
      throw new IllegalArgumentException(
          "a " + map.dimension() + "-d map for a " + dimension + "-d tree");
    }
    float[] a = map.rowMajor();
    DMatrixRMaj composed = new DMatrixRMaj(dimension, dimension);
    for (int i = 0; i < a.length; i++) {
      composed.data[i] = a[i];
    }
    if (forward != null) {
      DMatrixRMaj product = new DMatrixRMaj(dimension, dimension);
      CommonOps_DDRM.mult(composed, DMatrixRMaj.wrap(dimension, dimension, forward), product);
      composed = product;
    }
    return new TreeFrame(dimension, composed.data, pseudoInverse(composed));
  }

  /** {@code V S^+ U^T}, singular values under the cutoff dropped. */
  private static double[] pseudoInverse(DMatrixRMaj m) {
    int d = m.numRows;
    SingularValueDecomposition_F64<DMatrixRMaj> svd =
        DecompositionFactory_DDRM.svd(d, d, true, true, false);
    if (!svd.decompose(m.copy())) {
      throw new IllegalStateException("the SVD of a tree frame did not converge");
    }
    DMatrixRMaj u = svd.getU(null, false);
    DMatrixRMaj v = svd.getV(null, false);
    double[] singular = svd.getSingularValues();
    double largest = 0;
    for (double s : singular) {
      largest = Math.max(largest, s);
    }
    double[] out = new double[d * d];
    for (int k = 0; k < singular.length; k++) {
      if (!(singular[k] > PSEUDO_INVERSE_CUTOFF * largest)) {
        continue;
      }
      double inv = 1 / singular[k];
      for (int i = 0; i < d; i++) {
        double vik = v.get(i, k) * inv;
        for (int j = 0; j < d; j++) {
          out[i * d + j] += vik * u.get(j, k);
        }
      }
    }
    return out;
  }

  /**
   * How unevenly {@code F} stretches the given differences of tree vectors: the largest ratio
   * {@code |F e| / |e|} over the smallest (1 for the identity or a rotation).
   */
  public double distortion(Iterable<float[]> differences) {
    if (forward == null) {
      return 1;
    }
    double most = 0;
    double least = Double.POSITIVE_INFINITY;
    for (float[] e : differences) {
      double norm = VectorMath.norm(e);
      if (norm == 0) {
        continue;
      }
      double ratio = VectorMath.norm(multiply(forward, e, false)) / norm;
      most = Math.max(most, ratio);
      least = Math.min(least, ratio);
    }
    if (least == Double.POSITIVE_INFINITY) {
      return 1; // no edge to measure
    }
    return least == 0 ? Double.POSITIVE_INFINITY : most / least; // an edge collapsed: unusable
  }

  /** {@code F} as a cache map: what moves the tree's vectors to current coordinates. */
  public CacheMap asMap() {
    float[] m = new float[dimension * dimension];
    for (int i = 0; i < m.length; i++) {
      m[i] = forward == null ? (i % (dimension + 1) == 0 ? 1 : 0) : (float) forward[i];
    }
    return new CacheMap(dimension, m);
  }

  /** {@code F^T q}: the query whose scores against tree vectors are {@code q}'s against current. */
  public float[] queryInTree(float[] query) {
    if (forward == null) {
      return query;
    }
    return multiply(forward, query, true);
  }

  /**
   * {@code F^+ q}: where the query lies among the tree's vectors (the least-squares solution of
   * {@code F x = q}). Distances from it stand for distances in current coordinates up to F's scale
   * (within a factor of the frame's distortion once scaled); for a rotation it equals {@link
   * #queryInTree}. Scores come from {@link #queryInTree}, never from this.
   */
  public float[] positionInTree(float[] query) {
    if (forward == null) {
      return query;
    }
    return multiply(pseudoInverse, query, false);
  }

  /** {@code F x}: a tree vector in current coordinates (a new array). */
  public float[] toCurrent(float[] treeVector) {
    return forward == null ? treeVector.clone() : multiply(forward, treeVector, false);
  }

  /**
   * A current vector in the tree's coordinates ({@code F^+ z}, a new array), or null when the frame
   * does not reach it (it has a component in a direction the frame maps to zero).
   */
  public float[] toTree(float[] current) {
    if (forward == null) {
      return current.clone();
    }
    float[] x = multiply(pseudoInverse, current, false);
    float[] back = multiply(forward, x, false);
    double residual = 0;
    for (int i = 0; i < dimension; i++) {
      double d = (double) back[i] - current[i];
      residual += d * d;
    }
    return Math.sqrt(residual) <= REACH_TOLERANCE * VectorMath.norm(current) + 1e-9 ? x : null;
  }

  private float[] multiply(double[] m, float[] v, boolean transposed) {
    if (v.length != dimension) {
      throw new IllegalArgumentException(
          "a " + v.length + "-d vector for a " + dimension + "-d tree");
    }
    float[] out = new float[dimension];
    // F^T reads F's element (i, j) at j * dimension + i.
    VectorMath.multiply(m, transposed ? 1 : dimension, transposed ? dimension : 1, v, out);
    return out;
  }
}
