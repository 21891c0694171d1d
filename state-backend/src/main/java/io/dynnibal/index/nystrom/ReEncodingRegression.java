package io.dynnibal.index.nystrom;

import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.CommonOps_DDRM;

/**
 * Approximate re-encoding (paper Alg. 4, App. C): after w training steps, a ridge regression {@code
 * R} from the old cached vectors (d') to the new full encodings (d), fitted on s' targets
 * re-encoded with the new target tower. With the linear kernel on the encodings, Nyström kernel
 * ridge regression is ridge regression on the Nyström features, which the cached vectors already
 * are: {@code R(z) = B^T z}, {@code B = (Z^T Z + lambda I)^-1 Z^T F}.
 *
 * <p>The landmarks move too (their new encodings, exact or {@code R} of their cached vectors),
 * giving the new projector {@code P'}; every cached vector then becomes {@code P' R(z) = (P' B^T)
 * z}: one d' x d' {@link CacheMap}.
 */
public final class ReEncodingRegression {
  private ReEncodingRegression() {}

  /**
   * The new projector (for queries and new targets) and the map that carries every old cached
   * vector over.
   */
  public record Result(NystromProjector projector, CacheMap map) {}

  /**
   * @param oldCache the s' regression targets' cached vectors, s' x d'
   * @param newEncodings the same targets encoded by the new tower, s' x d
   * @param newLandmarkEncodings the landmarks encoded by the new tower, d' x d
   * @param ridge lambda relative to the mean eigenvalue of {@code Z^T Z} (trace / d'), so that one
   *     setting means the same at any s' (e.g. 1e-6 to 1e-2)
   * @param eigenFloor as in {@link NystromProjector#fit}
   */
  public static Result fit(
      float[][] oldCache,
      float[][] newEncodings,
      float[][] newLandmarkEncodings,
      double ridge,
      double eigenFloor) {
    return finish(regression(oldCache, newEncodings, ridge), newLandmarkEncodings, eigenFloor);
  }

  /**
   * As {@link #fit}, with the landmarks moved by the regression itself (the paper's variant):
   * R(their cache).
   */
  public static Result fitMovingLandmarksByRegression(
      float[][] oldCache,
      float[][] newEncodings,
      float[][] landmarkOldCache,
      double ridge,
      double eigenFloor) {
    DMatrixRMaj b = regression(oldCache, newEncodings, ridge);
    DMatrixRMaj landmarks = new DMatrixRMaj(landmarkOldCache.length, b.numCols);
    CommonOps_DDRM.mult(DenseMatrix.of(landmarkOldCache), b, landmarks);
    float[][] moved = new float[landmarks.numRows][landmarks.numCols];
    for (int i = 0; i < landmarks.numRows; i++) {
      for (int j = 0; j < landmarks.numCols; j++) {
        moved[i][j] = (float) landmarks.get(i, j);
      }
    }
    return finish(b, moved, eigenFloor);
  }

  /** B (d' x d) of the ridge regression z -> f. */
  private static DMatrixRMaj regression(float[][] oldCache, float[][] newEncodings, double ridge) {
    if (oldCache.length != newEncodings.length || oldCache.length == 0) {
      throw new IllegalArgumentException(
          "need as many (and at least one) new encodings as cached vectors: "
              + oldCache.length
              + " vs "
              + newEncodings.length);
    }
    DenseMatrix.requireFinite(oldCache, "cached vector");
    DenseMatrix.requireFinite(newEncodings, "new encoding");
    DMatrixRMaj z = DenseMatrix.of(oldCache);
    DMatrixRMaj f = DenseMatrix.of(newEncodings);
    int d = z.numCols;
    DMatrixRMaj gram = new DMatrixRMaj(d, d);
    CommonOps_DDRM.multTransA(z, z, gram);
    double lambda = ridge * Math.max(CommonOps_DDRM.trace(gram) / d, Double.MIN_NORMAL);
    for (int i = 0; i < d; i++) {
      gram.add(i, i, lambda);
    }
    DMatrixRMaj rhs = new DMatrixRMaj(d, f.numCols);
    CommonOps_DDRM.multTransA(z, f, rhs);
    DMatrixRMaj b = new DMatrixRMaj(d, f.numCols);
    if (!CommonOps_DDRM.solveSPD(gram, rhs, b) && !CommonOps_DDRM.solve(gram, rhs, b)) {
      throw new IllegalStateException("the ridge system is singular; raise the ridge");
    }
    return b;
  }

  private static Result finish(DMatrixRMaj b, float[][] newLandmarkEncodings, double eigenFloor) {
    NystromProjector projector = NystromProjector.fit(newLandmarkEncodings, eigenFloor);
    if (projector.inputDimension() != b.numCols) {
      throw new IllegalArgumentException(
          "landmarks of dimension "
              + projector.inputDimension()
              + " but encodings of dimension "
              + b.numCols);
    }
    DMatrixRMaj p = new DMatrixRMaj(projector.landmarkCount(), b.numCols);
    System.arraycopy(toDoubles(projector.projectionMatrix()), 0, p.data, 0, p.data.length);
    DMatrixRMaj map = new DMatrixRMaj(projector.landmarkCount(), b.numRows);
    CommonOps_DDRM.multTransB(p, b, map); // P' B^T: d'_new x d'_old
    if (map.numRows != map.numCols) {
      throw new IllegalArgumentException(
          "the number of landmarks changed: " + map.numCols + " -> " + map.numRows);
    }
    return new Result(projector, new CacheMap(map.numRows, DenseMatrix.rowMajorFloats(map)));
  }

  private static double[] toDoubles(float[] values) {
    double[] out = new double[values.length];
    for (int i = 0; i < values.length; i++) {
      out[i] = values[i];
    }
    return out;
  }
}
