package io.dynnibal.training;

import java.util.Arrays;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The logQ correction of a sampled softmax: each candidate's logit, in every row but its own
 * positive's, less the log of how many times the step expected to draw it, {@code logit - log
 * E[n(y)]}.
 *
 * <p>Why: the loss we want is the cross-entropy of the softmax over <em>all</em> targets, {@code
 * -s(x, y+) + log Z(x)}. A step sees only its candidates: the batch's positives, the shared hard
 * negatives and the uniform draws. Weighing each candidate by {@code 1 / E[n(y)]}
 * (Horvitz-Thompson) turns the candidates' sum into an estimate of {@code Z(x)}, and the gradient
 * into an estimate of the full softmax's, the estimator whose bias the paper bounds. Without it the
 * softmax is over the candidates as drawn: a uniform draw among 64 of 63,665 targets stands for
 * itself instead of for a thousand like it, and a negative drawn from the model's own softmax is
 * counted at that softmax's weight twice (once by being drawn, once in the loss), which pushes
 * hardest on the near-duplicates of the positive.
 *
 * <p>What a step knows of {@code E[n(y)]}: the batch's positives and the uniform draws count as
 * uniform draws over the index (the data's own frequencies are not tracked); a hard negative adds
 * the chance that the hard draws included it ({@link io.dynnibal.negatives.Inclusions}), known only
 * for the targets they did draw. A target a uniform draw hits that is hard for some query therefore
 * counts as uniform only, and the estimate of {@code Z(x)} lies between {@code Z(x)} and twice it,
 * the excess being the mass of the hard region (where the hard draws alone are exact).
 *
 * <p>The query's own positive is one known term of {@code Z(x)}: no offset on the diagonal.
 */
public final class SamplingCorrection {
  /** Whether a step corrects its candidates' logits ({@code negatives.correction}). */
  public enum Mode {
    /** The softmax over the candidates as drawn. */
    NONE("none"),
    /** Each candidate's logit less {@code log E[n(y)]}: the full softmax's estimate. */
    LOGQ("logq");

    public final String id;

    Mode(String id) {
      this.id = id;
    }

    public static final List<String> NAMES = Arrays.stream(values()).map(m -> m.id).toList();

    public static Mode of(String id) {
      for (Mode m : values()) {
        if (m.id.equals(id)) {
          return m;
        }
      }
      throw new IllegalArgumentException(
          "unknown negatives correction \"" + id + "\"; one of " + NAMES);
    }

    @Override
    public String toString() {
      return id;
    }
  }

  /** Smallest expected count an offset is computed from (a draw is at least this likely). */
  static final double MIN_EXPECTED = 1e-12;

  private SamplingCorrection() {}

  /**
   * The column offsets of a step, positives first then negatives (as {@link TrainingBatch} orders
   * its candidates): {@code -log E[n(id)]}.
   *
   * @param expectedCount the number of times the step expected each target among its candidates,
   *     every source together (in-batch positives, uniform and hard draws)
   */
  public static float[] offsets(
      List<String> positiveIds, List<String> negativeIds, ToDoubleFunction<String> expectedCount) {
    float[] offsets = new float[positiveIds.size() + negativeIds.size()];
    for (int j = 0; j < offsets.length; j++) {
      String id =
          j < positiveIds.size() ? positiveIds.get(j) : negativeIds.get(j - positiveIds.size());
      double expected = expectedCount.applyAsDouble(id);
      if (!(expected >= 0) || Double.isInfinite(expected)) {
        throw new IllegalArgumentException(
            "expected count of " + id + " must be finite and >= 0, got " + expected);
      }
      offsets[j] = (float) -Math.log(Math.max(MIN_EXPECTED, expected));
    }
    return offsets;
  }

  /**
   * The expected count of a target among {@code draws} draws that are each uniform over {@code
   * targets}: what in-batch positives (approximately) and uniform negatives contribute.
   */
  public static double uniformRate(int draws, long targets) {
    return targets <= 0 ? 0 : draws / (double) targets;
  }
}
