package io.dynnibal.training;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import io.dynnibal.model.graph.GraphScalars;
import java.util.List;

/**
 * Softmax cross-entropy of each query's positive against the candidates {@code [positives of the
 * batch; shared negatives]}: {@code loss_i = -log softmax(beta * q_i . T^T)_i}, averaged over the
 * batch.
 *
 * <p>Masking: a candidate whose target id equals query i's positive id, other than column i itself,
 * is removed from query i's softmax (a logit of -1e9) - otherwise a duplicate pair in the batch, or
 * an index that returns the positive as a "negative", would push the query away from its own
 * target.
 */
public final class SampledSoftmaxLoss {
  static final float MASKED = -1e9f;

  private SampledSoftmaxLoss() {}

  /** Row-major B x C additive mask; C = B + number of negatives. */
  public static float[] mask(List<String> positiveIds, List<String> negativeIds) {
    return mask(positiveIds, negativeIds, null);
  }

  /**
   * As {@link #mask(List, List)}, with {@code columnOffsets[j]} (C entries, or null: none) added to
   * column j in every row but j's own ({@link SamplingCorrection}).
   */
  public static float[] mask(
      List<String> positiveIds, List<String> negativeIds, float[] columnOffsets) {
    int b = positiveIds.size();
    int c = b + negativeIds.size();
    float[] mask = new float[b * c];
    for (int i = 0; i < b; i++) {
      String positive = positiveIds.get(i);
      for (int j = 0; j < c; j++) {
        String candidate = j < b ? positiveIds.get(j) : negativeIds.get(j - b);
        if (j != i && positive.equals(candidate)) {
          mask[i * c + j] = MASKED;
        } else if (j != i && columnOffsets != null) {
          mask[i * c + j] = columnOffsets[j];
        }
      }
    }
    return mask;
  }

  /** Number of entries {@link #mask} removed. */
  public static int maskedCount(float[] mask) {
    int n = 0;
    for (float m : mask) {
      if (m == MASKED) {
        n++;
      }
    }
    return n;
  }

  /**
   * The mean loss (a scalar that records gradients when the inputs do).
   *
   * @param queries B x d unit-norm query embeddings
   * @param candidates C x d unit-norm candidate embeddings, the first B being the positives in
   *     query order
   */
  public static NDArray loss(
      NDArray queries, NDArray candidates, float[] mask, float scoreScale, NDManager scope) {
    long b = queries.getShape().get(0);
    long c = candidates.getShape().get(0);
    if (c < b || mask.length != b * c) {
      throw new IllegalArgumentException(
          "need C >= B candidates and a B x C mask, got B="
              + b
              + " C="
              + c
              + " mask="
              + mask.length);
    }
    NDArray logits =
        GraphScalars.times(queries.matMul(candidates.transpose()), scoreScale)
            .add(scope.create(mask, new Shape(b, c)));
    NDArray logProbabilities = logits.logSoftmax(1);
    float[] diagonal = new float[(int) (b * c)];
    for (int i = 0; i < b; i++) {
      diagonal[(int) (i * c + i)] = 1f;
    }
    return GraphScalars.dividedBy(
        logProbabilities.mul(scope.create(diagonal, new Shape(b, c))).sum().neg(), b);
  }
}
