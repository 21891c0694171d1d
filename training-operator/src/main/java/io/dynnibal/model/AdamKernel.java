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

  /** A table's parameters and Adam's two moments, row-major, of one length. */
  record Moments(float[] parameters, float[] mean, float[] variance) {}

  /** What every row's update shares in one step. */
  record Step(float gradientScale, float beta1, float beta2, float epsilon) {}

  /**
   * Updates the moments at {@code offset} to {@code offset + dim - 1} from the gradient at {@code
   * gradientOffset}.
   */
  static void update(
      Moments state,
      int offset,
      float[] gradient,
      int gradientOffset,
      int dim,
      Step step,
      float stepSize) {
    int done =
        VectorMath.VECTORIZED
            ? VectorizedKernels.adamUpdate(
                state, offset, gradient, gradientOffset, dim, step, stepSize)
            : 0;
    scalarUpdate(state, offset, gradient, gradientOffset, dim, step, stepSize, done);
  }

  /** {@link #update}'s scalar loop, for the coordinates from {@code from} on. */
  static void scalarUpdate(
      Moments state,
      int offset,
      float[] gradient,
      int gradientOffset,
      int dim,
      Step step,
      float stepSize,
      int from) {
    float[] parameters = state.parameters();
    float[] mean = state.mean();
    float[] variance = state.variance();
    float beta1 = step.beta1();
    float beta2 = step.beta2();
    float epsilon = step.epsilon();
    for (int k = from; k < dim; k++) {
      float g = gradient[gradientOffset + k] * step.gradientScale();
      int at = offset + k;
      float m = mean[at] = beta1 * mean[at] + (1 - beta1) * g;
      float v = variance[at] = beta2 * variance[at] + (1 - beta2) * g * g;
      parameters[at] -= stepSize * m / ((float) Math.sqrt(v) + epsilon);
    }
  }
}
