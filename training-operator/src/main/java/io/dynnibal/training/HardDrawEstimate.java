package io.dynnibal.training;

import java.util.Arrays;

/**
 * The chance that a step's hard draws would have included the candidates they did not draw (a
 * uniform draw, another query's positive), estimated from the step's own logits: the term that
 * {@link SamplingCorrection.Mode#BALANCE} adds to each such candidate's expected count.
 *
 * <p>Why: under {@code logq} a uniform draw that lands on a target hard for some query counts as
 * uniform only, {@code 1 / E[n(y)]} about 330 on Debian, while the hard draws cover that target
 * already; the normaliser's estimate then counts the hard region twice on average, and a rare such
 * hit weighs a near-duplicate of the positive hundreds of times over. Counting every candidate by
 * every source that could have drawn it (the balance heuristic) keeps the estimate unbiased and
 * bounds each candidate's weight by {@code 1 / (its hard draws' chance)}.
 *
 * <p>How: query {@code i}'s sampler drew {@code draws} times from the softmax {@code exp(s) /
 * exp(rowLogMass[i])} over its pool (the shards' cache logits, or the negative cache). The step's
 * fresh logit {@code s_i(y)} stands in for the sampler's stale one, so {@code p_i(y) = min(1,
 * exp(s_i(y) - rowLogMass[i]))}, and the draws include {@code y} with {@code 1 - prod_i (1 -
 * p_i(y))^draws}. Rows with an unknown mass (NaN) drew nothing from a known softmax and add
 * nothing; a query's own positive (the diagonal, and any masked cell) is never its draw. Columns
 * the hard draws did draw keep the chance their sampler reported (exact), so only {@code estimated}
 * columns are touched.
 *
 * @param rowLogMass per query (row), the log of its sampler's mass over its pool; NaN: none
 * @param estimated per candidate column, whether its hard chance is estimated here (false: drawn,
 *     with a known chance, or outside the hard sampler's pool)
 * @param draws hard draws per query ({@code negatives.per.example})
 */
public record HardDrawEstimate(float[] rowLogMass, boolean[] estimated, int draws) {
  public HardDrawEstimate {
    if (draws < 1) {
      throw new IllegalArgumentException("draws must be >= 1, got " + draws);
    }
  }

  /**
   * The column offsets with each estimated column's hard chance added to its expected count: {@code
   * -log(exp(-offset) + chance)}.
   *
   * @param columnOffsets C offsets, {@code -log E[n(y)]} from every source known before the logits
   * @param logits the step's B x C logits (scaled), row-major, without the mask
   * @param mask the loss's B x C mask ({@link SampledSoftmaxLoss#mask}): masked cells are a query's
   *     own positive
   */
  public float[] apply(float[] columnOffsets, float[] logits, float[] mask) {
    int b = rowLogMass.length;
    int c = columnOffsets.length;
    if (estimated.length != c || logits.length != (long) b * c || mask.length != logits.length) {
      throw new IllegalArgumentException(
          "need B x C logits and mask for B="
              + b
              + ", C="
              + c
              + "; got "
              + logits.length
              + " logits, "
              + mask.length
              + " mask cells, "
              + estimated.length
              + " columns estimated");
    }
    float[] out = Arrays.copyOf(columnOffsets, c);
    for (int j = 0; j < c; j++) {
      if (estimated[j]) {
        double chance = chance(j, logits, mask, c);
        out[j] =
            (float)
                -Math.log(
                    Math.max(
                        SamplingCorrection.MIN_EXPECTED,
                        Math.exp(-(double) columnOffsets[j]) + chance));
      }
    }
    return out;
  }

  /** {@code 1 - prod_i (1 - p_i(y_j))^draws} over the rows that drew from a known softmax. */
  private double chance(int j, float[] logits, float[] mask, int c) {
    double logMissed = 0;
    for (int i = 0; i < rowLogMass.length; i++) {
      if (i == j || Float.isNaN(rowLogMass[i]) || mask[i * c + j] == SampledSoftmaxLoss.MASKED) {
        continue;
      }
      double p = Math.min(1, Math.exp(logits[i * c + j] - (double) rowLogMass[i]));
      if (p >= 1) {
        return 1;
      }
      logMissed += draws * Math.log1p(-p);
    }
    return -Math.expm1(logMissed);
  }
}
