package io.dynnibal.index.sampling;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Negatives drawn for one query.
 *
 * @param targets the sampled targets (exact samplers: i.i.d., so repeats are possible; practical
 *     variants: distinct)
 * @param logits {@code beta * <x, y>} of each target, the unnormalised log-probability under the
 *     softmax
 * @param proposals proposals made (MH moves after each chain's start, or rejection-sampling
 *     attempts)
 * @param accepted proposals accepted
 * @param logMass an estimate of {@code log sum_y exp(logit_y)} over the targets sampled from (the
 *     tree's softmax normaliser), which weighs this tree against others when several are sampled as
 *     one forest; NaN when the sampler has none
 */
public record Samples(
    int[] targets, double[] logits, long proposals, long accepted, double logMass) {

  public Samples(int[] targets, double[] logits, long proposals, long accepted) {
    this(targets, logits, proposals, accepted, Double.NaN);
  }

  public int size() {
    return targets.length;
  }

  /**
   * The {@code count} distinct candidates of highest logit, best first (ties by target id, so a
   * seed reproduces the order): how the practical sampler and the forest keep their hardest
   * negatives.
   */
  static Samples best(
      Map<Integer, Double> logitByTarget,
      int count,
      long proposals,
      long accepted,
      double logMass) {
    List<Map.Entry<Integer, Double>> ranked = new ArrayList<>(logitByTarget.entrySet());
    ranked.sort(
        Comparator.comparingDouble((Map.Entry<Integer, Double> e) -> -e.getValue())
            .thenComparing(Map.Entry::getKey));
    int n = Math.min(count, ranked.size());
    int[] targets = new int[n];
    double[] logits = new double[n];
    for (int i = 0; i < n; i++) {
      targets[i] = ranked.get(i).getKey();
      logits[i] = ranked.get(i).getValue();
    }
    return new Samples(targets, logits, proposals, accepted, logMass);
  }

  /** Accepted / proposed; 1 when nothing was proposed. */
  public double acceptanceRate() {
    return proposals == 0 ? 1 : accepted / (double) proposals;
  }
}
