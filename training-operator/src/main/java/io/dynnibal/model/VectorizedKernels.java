package io.dynnibal.model;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link RowKernels}' and {@link AdamKernel}'s loops on the Vector API, eight float lanes, the same
 * bits as the scalar loops: every lane does for its coordinate what the scalar loop does, in the
 * same order. Loaded only when {@link io.dynnibal.index.VectorMath#VECTORIZED}, that is when the
 * JVM has {@code jdk.incubator.vector}.
 */
final class VectorizedKernels {
  private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_256;

  private VectorizedKernels() {}

  /**
   * {@link RowKernels#weightedRowSum}: 32 coordinates at a time in four registers over all rows,
   * then 8 at a time, the rest by the scalar loop.
   */
  static void weightedRowSum(
      float[] table, int dim, int[] rows, float[] weights, int count, float[] out, int offset) {
    int lanes = FLOATS.length();
    int c = 0;
    for (; c + 4 * lanes <= dim; c += 4 * lanes) {
      FloatVector s0 = FloatVector.zero(FLOATS);
      FloatVector s1 = s0;
      FloatVector s2 = s0;
      FloatVector s3 = s0;
      for (int j = 0; j < count; j++) {
        int at = rows[j] * dim + c;
        float w = weights[j];
        s0 = s0.add(FloatVector.fromArray(FLOATS, table, at).mul(w));
        s1 = s1.add(FloatVector.fromArray(FLOATS, table, at + lanes).mul(w));
        s2 = s2.add(FloatVector.fromArray(FLOATS, table, at + 2 * lanes).mul(w));
        s3 = s3.add(FloatVector.fromArray(FLOATS, table, at + 3 * lanes).mul(w));
      }
      s0.intoArray(out, offset + c);
      s1.intoArray(out, offset + c + lanes);
      s2.intoArray(out, offset + c + 2 * lanes);
      s3.intoArray(out, offset + c + 3 * lanes);
    }
    for (; c + lanes <= dim; c += lanes) {
      FloatVector sum = FloatVector.zero(FLOATS);
      for (int j = 0; j < count; j++) {
        sum = sum.add(FloatVector.fromArray(FLOATS, table, rows[j] * dim + c).mul(weights[j]));
      }
      sum.intoArray(out, offset + c);
    }
    if (c < dim) {
      RowKernels.scalarWeightedRowSum(table, dim, rows, weights, count, out, offset, c);
    }
  }

  /** {@link RowKernels#addScaled}: 8 coordinates at a time, the rest by the scalar loop. */
  static void addScaled(float a, float[] x, int xOffset, float[] y, int yOffset, int n) {
    int lanes = FLOATS.length();
    int k = 0;
    for (; k + lanes <= n; k += lanes) {
      FloatVector.fromArray(FLOATS, x, xOffset + k)
          .mul(a)
          .add(FloatVector.fromArray(FLOATS, y, yOffset + k))
          .intoArray(y, yOffset + k);
    }
    RowKernels.scalarAddScaled(a, x, xOffset, y, yOffset, k, n);
  }

  /**
   * {@link AdamKernel#update} on the whole vectors of the row, eight coordinates at a time: returns
   * how many coordinates it updated (the caller's scalar loop does the rest).
   */
  static int adamUpdate(
      AdamKernel.Moments state,
      int offset,
      float[] gradient,
      int gradientOffset,
      int dim,
      AdamKernel.Step step,
      float stepSize) {
    float[] parameters = state.parameters();
    float[] mean = state.mean();
    float[] variance = state.variance();
    float gradientScale = step.gradientScale();
    float beta1 = step.beta1();
    float beta2 = step.beta2();
    float epsilon = step.epsilon();
    float keep1 = 1 - beta1;
    float keep2 = 1 - beta2;
    int k = 0;
    for (; k + FLOATS.length() <= dim; k += FLOATS.length()) {
      int at = offset + k;
      FloatVector g =
          FloatVector.fromArray(FLOATS, gradient, gradientOffset + k).mul(gradientScale);
      FloatVector m = FloatVector.fromArray(FLOATS, mean, at).mul(beta1).add(g.mul(keep1));
      FloatVector v =
          FloatVector.fromArray(FLOATS, variance, at).mul(beta2).add(g.mul(keep2).mul(g));
      m.intoArray(mean, at);
      v.intoArray(variance, at);
      FloatVector.fromArray(FLOATS, parameters, at)
          .sub(m.mul(stepSize).div(v.sqrt().add(epsilon)))
          .intoArray(parameters, at);
    }
    return k;
  }
}
