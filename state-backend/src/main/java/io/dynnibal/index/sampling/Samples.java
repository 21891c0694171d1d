package io.dynnibal.index.sampling;

/**
 * Negatives drawn for one query.
 *
 * @param targets the sampled targets (exact samplers: i.i.d., so repeats are possible; practical variants: distinct)
 * @param logits {@code beta * <x, y>} of each target, the unnormalised log-probability under the softmax
 * @param proposals proposals made (MH steps, or rejection-sampling attempts)
 * @param accepted proposals accepted
 */
public record Samples(int[] targets, double[] logits, long proposals, long accepted) {

  public int size() {
    return targets.length;
  }

  /** Accepted / proposed; 1 when nothing was proposed. */
  public double acceptanceRate() {
    return proposals == 0 ? 1 : accepted / (double) proposals;
  }
}
