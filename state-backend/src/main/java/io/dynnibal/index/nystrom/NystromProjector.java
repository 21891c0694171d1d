package io.dynnibal.index.nystrom;

import io.dynnibal.index.VectorMath;
import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.CommonOps_DDRM;
import org.ejml.dense.row.factory.DecompositionFactory_DDRM;
import org.ejml.interfaces.decomposition.EigenDecomposition_F64;

/**
 * The Nyström cache of §4.1 / App. C: d' landmark encodings {@code L} (d' x d, kept at full
 * dimension) and {@code W = S^T K S = L L^T}, the landmarks' similarities. A full encoding {@code
 * v} becomes {@code z = W^(+1/2) L v} (d'), the same map for queries and targets, so that {@code
 * <z(a), z(b)> = (L a)^T W^+ (L b)}: Nyström's approximation of {@code <a, b>}, exact when a and b
 * lie in the span of the landmarks.
 *
 * <p>Why one symmetric map rather than the paper's pair (queries {@code K S}, targets {@code W^+
 * S^T K}): Euclidean distances between cached targets then approximate distances between their
 * encodings, so the SG tree can index the cache with a true metric, and every bound of the samplers
 * (Cauchy-Schwarz, triangle inequality) still holds. The paper's {@code exp(-similarity)} distance
 * (App. B.1) is not a metric; for unit-norm encoders the Euclidean distance is already a function
 * of the similarity, {@code |a - b|^2 = 2 - 2 <a, b>}.
 *
 * <p>{@code W^(+1/2)} comes from a symmetric eigendecomposition: eigenvalues below {@code
 * eigenFloor} times the largest are dropped (a regularised pseudo-inverse), so near-duplicate
 * landmarks do not blow up the cache.
 */
public final class NystromProjector {
  private final int landmarks;
  private final int inputDimension;
  // P = W^(+1/2) L, d' x d, row-major: float values (as fitted, rounded once) held as doubles for
  // the products.
  private final double[] projection;
  private final float[] whitening; // W^(+1/2), d' x d', row-major
  private final float[][] landmarkEncodings;
  private final int rank;

  private NystromProjector(
      float[][] landmarkEncodings, DMatrixRMaj whitening, DMatrixRMaj projection, int rank) {
    this.landmarks = landmarkEncodings.length;
    this.inputDimension = landmarkEncodings[0].length;
    this.landmarkEncodings = landmarkEncodings;
    this.whitening = DenseMatrix.rowMajorFloats(whitening);
    float[] rounded = DenseMatrix.rowMajorFloats(projection);
    this.projection = new double[rounded.length];
    for (int i = 0; i < rounded.length; i++) {
      this.projection[i] = rounded[i];
    }
    this.rank = rank;
  }

  /**
   * @param landmarkEncodings d' full-dimensional landmark encodings (copied)
   * @param eigenFloor eigenvalues of W below this fraction of the largest are treated as zero, e.g.
   *     1e-6
   */
  public static NystromProjector fit(float[][] landmarkEncodings, double eigenFloor) {
    if (landmarkEncodings.length == 0) {
      throw new IllegalArgumentException("Nystrom needs at least one landmark");
    }
    DenseMatrix.requireFinite(landmarkEncodings, "landmark");
    float[][] copy = new float[landmarkEncodings.length][];
    for (int i = 0; i < copy.length; i++) {
      copy[i] = landmarkEncodings[i].clone();
    }
    DMatrixRMaj l = DenseMatrix.of(copy);
    int m = l.numRows;
    DMatrixRMaj w = new DMatrixRMaj(m, m);
    CommonOps_DDRM.multTransB(l, l, w);
    EigenDecomposition_F64<DMatrixRMaj> eig = DecompositionFactory_DDRM.eig(m, true, true);
    if (!eig.decompose(w.copy())) {
      throw new IllegalStateException(
          "eigendecomposition of the landmark similarity matrix failed");
    }
    double largest = 0;
    for (int i = 0; i < eig.getNumberOfEigenvalues(); i++) {
      largest = Math.max(largest, eig.getEigenvalue(i).real);
    }
    DMatrixRMaj whitening = new DMatrixRMaj(m, m);
    int rank = 0;
    for (int i = 0; i < eig.getNumberOfEigenvalues(); i++) {
      double lambda = eig.getEigenvalue(i).real;
      if (lambda <= eigenFloor * largest || lambda <= 0) {
        continue;
      }
      rank++;
      DMatrixRMaj u = eig.getEigenVector(i);
      double scale = 1 / Math.sqrt(lambda);
      for (int r = 0; r < m; r++) {
        for (int c = 0; c < m; c++) {
          whitening.add(r, c, scale * u.get(r) * u.get(c));
        }
      }
    }
    DMatrixRMaj projection = new DMatrixRMaj(m, l.numCols);
    CommonOps_DDRM.mult(whitening, l, projection);
    return new NystromProjector(copy, whitening, projection, rank);
  }

  /**
   * The projector a model update describes: its landmark encodings {@code L} (d' x d) and {@code
   * W^(+1/2)} (d' x d', row-major), as {@link #landmarkEncodings()} and {@link #whitening()} give
   * them. No refit: every reader computes exactly the projection the writer fitted.
   */
  public static NystromProjector fromParts(
      float[][] landmarkEncodings, float[] whitening, int rank) {
    int m = landmarkEncodings.length;
    if (m == 0 || whitening.length != m * m) {
      throw new IllegalArgumentException(
          "need d' >= 1 landmarks and a d' x d' whitening, got "
              + m
              + " landmarks and "
              + whitening.length
              + " values");
    }
    DenseMatrix.requireFinite(landmarkEncodings, "landmark");
    float[][] copy = new float[m][];
    for (int i = 0; i < m; i++) {
      copy[i] = landmarkEncodings[i].clone();
    }
    DMatrixRMaj w = new DMatrixRMaj(m, m);
    for (int i = 0; i < whitening.length; i++) {
      if (!Float.isFinite(whitening[i])) {
        throw new IllegalArgumentException("whitening matrix holds a non-finite value at " + i);
      }
      w.data[i] = whitening[i];
    }
    DMatrixRMaj l = DenseMatrix.of(copy);
    DMatrixRMaj projection = new DMatrixRMaj(m, l.numCols);
    CommonOps_DDRM.mult(w, l, projection);
    return new NystromProjector(copy, w, projection, rank);
  }

  /** The cached vector of a full encoding: {@code W^(+1/2) L v}. */
  public float[] project(float[] encoding) {
    if (encoding.length != inputDimension) {
      throw new IllegalArgumentException(
          "encoding of dimension " + encoding.length + ", the landmarks have " + inputDimension);
    }
    float[] z = new float[landmarks];
    VectorMath.multiply(projection, inputDimension, 1, encoding, z);
    return z;
  }

  public int landmarkCount() {
    return landmarks;
  }

  public int inputDimension() {
    return inputDimension;
  }

  /** Eigenvalues of W kept: the rank of the approximation. */
  public int rank() {
    return rank;
  }

  /** A copy of the landmark encodings, d' x d. */
  public float[][] landmarkEncodings() {
    float[][] copy = new float[landmarks][];
    for (int i = 0; i < landmarks; i++) {
      copy[i] = landmarkEncodings[i].clone();
    }
    return copy;
  }

  /** {@code W^(+1/2)}, d' x d', row-major (what a ModelUpdate carries beside the landmarks). */
  public float[] whitening() {
    return whitening.clone();
  }

  /** {@code P = W^(+1/2) L}, d' x d, row-major. */
  public float[] projectionMatrix() {
    float[] out = new float[projection.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = (float) projection[i];
    }
    return out;
  }
}
