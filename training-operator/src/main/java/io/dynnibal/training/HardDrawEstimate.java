package io.dynnibal.training;

import java.util.Arrays;

/**
 * The chance that a step's hard draws would have included each candidate, estimated from the step's
 * own logits: the term that {@link SamplingCorrection.Mode#BALANCE} adds to a candidate's expected
 * count.
 *
 * <p>Why: under {@code logq} a uniform draw that lands on a target hard for some query counts as
 * uniform only, {@code 1 / E[n(y)]} about 330 on Debian, while the hard draws cover that target
 * already; the normaliser's estimate then counts the hard region twice on average, and a rare such
 * hit weighs a near-duplicate of the positive hundreds of times over. Counting every candidate by
 * every source that could have drawn it (the balance heuristic) keeps the estimate unbiased and
 * bounds each candidate's weight by {@code 1 / (its hard draws' chance)}.
 *
 * <p>How: query {@code i} drew {@code draws} times from a softmax {@code p_i(y) = exp(s_i(y)) /
 * Z_i} with the step's fresh logit {@code s_i(y)} standing in for the sampler's own, and the draws
 * include {@code y} with {@code 1 - prod_i (1 - p_i(y))^draws}. Rows whose {@code rowLogMass} is
 * NaN drew nothing from a softmax and add nothing; a query's own positive (the diagonal, and any
 * masked cell) is never its draw. Only {@code estimated} columns gain the chance (the others:
 * outside the sampler's pool, or drawn with a chance already counted in their offset). {@code Z_i}
 * is either
 *
 * <ul>
 *   <li>given ({@code selfNormalised} false): {@code exp(rowLogMass[i])}, the mass the sampler
 *       computed over its pool (the negative cache's is exact over the cache); or
 *   <li>solved from the candidates ({@code selfNormalised} true): the normaliser whose candidates'
 *       balance estimate reproduces it, {@code Z_i = sum_y exp(s_i(y)) / E[n(y); Z]}, a few
 *       fixed-point rounds from the uniform-only estimate (a ratio estimator, so biased: +11 % in
 *       the test's setting, where {@code logq} is +41 % and the exact mass 0). For the shards'
 *       samplers, whose own estimates of {@code Z_i} come from stale low-rank caches and run
 *       0.5-1.5 nats low on a trained Debian model ({@code normaliser_error}): divided into the
 *       fresh logits they would inflate every chance by a factor 2-4.
 * </ul>
 *
 * @param rowLogMass per query (row), the log of its sampler's mass over its pool; NaN: the query
 *     drew nothing from a softmax (when self-normalised only whether it is NaN counts)
 * @param estimated per candidate column, whether its hard chance is added here
 * @param draws hard draws per query ({@code negatives.per.example})
 * @param selfNormalised solve each row's normaliser from the candidates instead of {@code
 *     rowLogMass}
 */
public record HardDrawEstimate(
    float[] rowLogMass, boolean[] estimated, int draws, boolean selfNormalised) {
  /**
   * Fixed-point rounds for a self-normalised estimate: the iteration is monotone (a larger {@code
   * Z} gives smaller chances, so larger weights and a larger {@code Z}) and within 1 % of its fixed
   * point after 8 rounds in {@code HardDrawEstimateTest}'s setting.
   */
  static final int ROUNDS = 8;

  public HardDrawEstimate {
    if (draws < 1) {
      throw new IllegalArgumentException("draws must be >= 1, got " + draws);
    }
  }

  /** With each row's mass given. */
  public HardDrawEstimate(float[] rowLogMass, boolean[] estimated, int draws) {
    this(rowLogMass, estimated, draws, false);
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
    double[] base = new double[c];
    for (int j = 0; j < c; j++) {
      base[j] = Math.exp(-(double) columnOffsets[j]);
    }
    double[] logZ = new double[b];
    for (int i = 0; i < b; i++) {
      logZ[i] = rowLogMass[i];
    }
    double[] expected = Arrays.copyOf(base, c);
    if (selfNormalised) {
      for (int i = 0; i < b; i++) {
        logZ[i] = Float.isNaN(rowLogMass[i]) ? Double.NaN : normaliser(i, logits, mask, expected);
      }
      for (int round = 0; round < ROUNDS; round++) {
        expected = expectedCounts(base, logZ, logits, mask);
        for (int i = 0; i < b; i++) {
          if (!Double.isNaN(logZ[i])) {
            logZ[i] = normaliser(i, logits, mask, expected);
          }
        }
      }
    }
    expected = expectedCounts(base, logZ, logits, mask);
    float[] out = new float[c];
    for (int j = 0; j < c; j++) {
      out[j] = (float) -Math.log(Math.max(SamplingCorrection.MIN_EXPECTED, expected[j]));
    }
    return out;
  }

  /** Each column's expected count: its base, plus the hard draws' chance where estimated. */
  private double[] expectedCounts(double[] base, double[] logZ, float[] logits, float[] mask) {
    int c = base.length;
    double[] expected = Arrays.copyOf(base, c);
    for (int j = 0; j < c; j++) {
      if (estimated[j]) {
        expected[j] += chance(j, logZ, logits, mask, c);
      }
    }
    return expected;
  }

  /** {@code 1 - prod_i (1 - p_i(y_j))^draws} over the rows that drew from a softmax. */
  private double chance(int j, double[] logZ, float[] logits, float[] mask, int c) {
    double logMissed = 0;
    for (int i = 0; i < logZ.length; i++) {
      if (i == j || Double.isNaN(logZ[i]) || mask[i * c + j] == SampledSoftmaxLoss.MASKED) {
        continue;
      }
      double p = Math.min(1, Math.exp(logits[i * c + j] - logZ[i]));
      if (p >= 1) {
        return 1;
      }
      logMissed += draws * Math.log1p(-p);
    }
    return -Math.expm1(logMissed);
  }

  /**
   * {@code log sum_y exp(s_i(y)) / E[n(y)]} over row i's candidates but its own positive: the
   * balance estimate of the normaliser its sampler drew from.
   */
  private static double normaliser(int i, float[] logits, float[] mask, double[] expected) {
    int c = expected.length;
    double max = Double.NEGATIVE_INFINITY;
    for (int j = 0; j < c; j++) {
      if (j != i && mask[i * c + j] != SampledSoftmaxLoss.MASKED) {
        max = Math.max(max, logits[i * c + j] - Math.log(expected[j]));
      }
    }
    if (max == Double.NEGATIVE_INFINITY) {
      return Double.NaN;
    }
    double sum = 0;
    for (int j = 0; j < c; j++) {
      if (j != i && mask[i * c + j] != SampledSoftmaxLoss.MASKED) {
        sum += Math.exp(logits[i * c + j] - Math.log(expected[j]) - max);
      }
    }
    return max + Math.log(sum);
  }
}
