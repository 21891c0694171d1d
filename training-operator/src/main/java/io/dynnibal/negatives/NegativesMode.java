package io.dynnibal.negatives;

import java.util.Arrays;
import java.util.List;

/**
 * How a hard-negative sampler turns scores into each example's negatives ({@code negatives.mode}).
 *
 * <ul>
 *   <li>{@code sample}: draws from the softmax {@code exp(beta * score)}, as the paper's method
 *       intends: hard negatives in proportion to how hard they are, not only the nearest. On
 *       corpora with near-duplicates the nearest target is often a copy of the positive; a sample
 *       mostly is not;
 *   <li>{@code top-k}: the k highest-scoring (the paper's "practical" variant and its exhaustive
 *       oracle).
 * </ul>
 *
 * A sample may come from a sharper softmax than the model's, {@code exp(sharpness * beta * score)}
 * ({@code negatives.sharpness}): harder negatives, with top-k as the limit.
 */
public enum NegativesMode {
  SAMPLE("sample"),
  TOP_K("top-k");

  public final String id;

  NegativesMode(String id) {
    this.id = id;
  }

  public static final List<String> NAMES = Arrays.stream(values()).map(m -> m.id).toList();

  public static NegativesMode of(String id) {
    for (NegativesMode m : values()) {
      if (m.id.equals(id)) {
        return m;
      }
    }
    throw new IllegalArgumentException("unknown negatives mode \"" + id + "\"; one of " + NAMES);
  }

  /**
   * The scale of the softmax this mode chooses from: {@code sharpness * beta} when sampling;
   * top-k's order does not depend on it, and its picks' logits stay on the model's scale.
   */
  public double softmaxScale(double beta, double sharpness) {
    return this == TOP_K ? beta : sharpness * beta;
  }

  @Override
  public String toString() {
    return id;
  }
}
