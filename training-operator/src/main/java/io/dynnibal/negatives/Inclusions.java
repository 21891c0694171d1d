package io.dynnibal.negatives;

import java.util.HashMap;
import java.util.Map;

/**
 * How likely a batch's shared hard negatives were to include each target: the union of every
 * query's draws includes {@code y} unless each query's draws all missed it, {@code 1 - prod_q (1 -
 * p_q(y))^k}. Only the queries that did draw {@code y} are known to the caller; the others' share
 * is left out (small: a hard negative of one query is mostly a random target for the others). The
 * step's sampling correction ({@code io.dynnibal.training.SamplingCorrection}) divides each
 * negative's weight by this.
 */
public final class Inclusions {
  /** By target id, {@code log P(no draw so far is the target)}. */
  private final Map<String, Double> logMissed = new HashMap<>();

  /**
   * A query whose {@code draws} independent draws gave {@code id} probability {@code probability}
   * each, and drew it. A NaN probability is a negative chosen, not drawn (top-k): included for
   * certain.
   */
  public void drawn(String id, double probability, int draws) {
    double p = Double.isNaN(probability) ? 1 : Math.min(1, Math.max(0, probability));
    double missed = p == 1 ? Double.NEGATIVE_INFINITY : draws * Math.log1p(-p);
    logMissed.merge(id, missed, Double::sum);
  }

  /** The probability that the batch's draws included {@code id}; 0 for a target none drew. */
  public double of(String id) {
    Double missed = logMissed.get(id);
    return missed == null ? 0 : -Math.expm1(missed);
  }
}
