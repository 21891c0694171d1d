package io.dynnibal.model;

import io.dynnibal.index.VectorMath;

/**
 * One Adam update (Kingma and Ba) of a row of parameters, the kernel of {@link
 * SparseEmbeddingTable}'s lazy Adam. For each coordinate {@code k < dim}, with {@code g =
 * gradient[gradientOffset + k] * gradientScale}:
 *
 * <pre>
 *   m = beta1 m + (1 - beta1) g
 *   v = beta2 v + (1 - beta2) g g
 *   p = p - stepSize m / (sqrt(v) + epsilon)
 * </pre>
 *
 * in float and in that order, {@code stepSize} carrying the learning rate and the bias correction.
 * Each lane's operations are IEEE's correctly rounded ones, so the Vector API kernel ({@link
 * VectorizedKernels}, taken when {@link VectorMath#VECTORIZED}) gives the scalar loop's bits.
 */
final class AdamKernel {
  private AdamKernel() {}

  /**
   * Updates {@code parameters}, {@code mean} and {@code variance} at {@code offset} to {@code
   * offset + dim - 1} from the gradient at {@code gradientOffset}.
   */
  static void update(
      float[] parameters,
      float[] mean,
      float[] variance,
      int offset,
      float[] gradient,
      int gradientOffset,
      int dim,
      float gradientScale,
      float beta1,
      float beta2,
      float epsilon,
      float stepSize) {
    int done =
        VectorMath.VECTORIZED
            ? VectorizedKernels.adamUpdate(
                parameters,
                mean,
                variance,
                offset,
                gradient,
                gradientOffset,
                dim,
                gradientScale,
                beta1,
                beta2,
                epsilon,
                stepSize)
            : 0;
    scalarUpdate(
        parameters,
        mean,
        variance,
        offset,
        gradient,
        gradientOffset,
        dim,
        gradientScale,
        beta1,
        beta2,
        epsilon,
        stepSize,
        done);
  }

  /** {@link #update}'s scalar loop, for the coordinates from {@code from} on. */
  static void scalarUpdate(
      float[] parameters,
      float[] mean,
      float[] variance,
      int offset,
      float[] gradient,
      int gradientOffset,
      int dim,
      float gradientScale,
      float beta1,
      float beta2,
      float epsilon,
      float stepSize,
      int from) {
    for (int k = from; k < dim; k++) {
      float g = gradient[gradientOffset + k] * gradientScale;
      int at = offset + k;
      float m = mean[at] = beta1 * mean[at] + (1 - beta1) * g;
      float v = variance[at] = beta2 * variance[at] + (1 - beta2) * g * g;
      parameters[at] -= stepSize * m / ((float) Math.sqrt(v) + epsilon);
    }
  }
}
