package io.dynnibal.eval;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Exact retrieval quality over all targets: recall@k (the positive ranks in the top k) and MRR@k
 * (1/rank when it does, else 0), averaged over queries - the columns of the paper's Tables 1 and 2.
 *
 * @param queries queries evaluated (including those whose target is unknown, which count as misses)
 * @param unknownTargets queries whose target id is not among the targets
 * @param recall k -> recall@k
 * @param mrr k -> MRR@k
 */
public record RetrievalMetrics(
    int queries,
    int unknownTargets,
    int targets,
    Map<Integer, Double> recall,
    Map<Integer, Double> mrr,
    double seconds) {
  public static final int[] RECALL_AT = {1, 5, 10, 20, 100};
  public static final int[] MRR_AT = {10, 100};

  /** The figures as one flat, ordered map (for JSON and tables). */
  public Map<String, Object> figures() {
    Map<String, Object> figures = new LinkedHashMap<>();
    figures.put("queries", queries);
    figures.put("unknown_targets", unknownTargets);
    figures.put("targets", targets);
    recall.forEach((k, v) -> figures.put("recall_at_" + k, round(v)));
    mrr.forEach((k, v) -> figures.put("mrr_at_" + k, round(v)));
    figures.put("seconds", round(seconds));
    return figures;
  }

  public double recallAt(int k) {
    Double value = recall.get(k);
    if (value == null) {
      throw new IllegalArgumentException("recall@" + k + " was not computed");
    }
    return value;
  }

  private static double round(double v) {
    return Math.round(v * 10000) / 10000.0;
  }
}
