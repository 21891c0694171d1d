package io.dynnibal.training;

/**
 * Drops likely false negatives from a step's softmax: a candidate whose score with query i exceeds
 * {@code margin} times the score of query i's own positive (the relative-margin filter of
 * NV-Retriever, Moreira et al. 2024, "TopK-PercPos"). Near-duplicate targets of a positive (a
 * library's {@code -dev} package, a synonym sense) score about as high as the positive itself; as
 * negatives they teach the model to rank a right answer down.
 *
 * <p>Scores are the current model's cosines, measured in the step itself, so the filter follows the
 * model as it trains. Only the shared negatives are filtered (the batch's other positives are
 * someone's answer), and only for a query whose positive scores above zero (a share of a negative
 * score bounds nothing).
 */
public final class FalseNegativeFilter {
  private FalseNegativeFilter() {}

  /**
   * Masks, in the row-major B x C additive {@code mask}, every negative column {@code j >= b} of
   * row i whose {@code scores[i * c + j]} is above {@code margin * scores[i * c + i]}; returns how
   * many it masked. {@code margin} 0 masks nothing.
   */
  public static int apply(float[] mask, float[] scores, int b, int c, float margin) {
    if (margin <= 0) {
      return 0;
    }
    if (mask.length != b * c || scores.length != b * c) {
      throw new IllegalArgumentException(
          "mask and scores must be B x C = "
              + b * c
              + ", got "
              + mask.length
              + ", "
              + scores.length);
    }
    int dropped = 0;
    for (int i = 0; i < b; i++) {
      float positive = scores[i * c + i];
      if (positive <= 0) {
        continue;
      }
      float bound = margin * positive;
      for (int j = b; j < c; j++) {
        if (scores[i * c + j] > bound && mask[i * c + j] != SampledSoftmaxLoss.MASKED) {
          mask[i * c + j] = SampledSoftmaxLoss.MASKED;
          dropped++;
        }
      }
    }
    return dropped;
  }
}
