package io.dynnibal.negatives;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The batch's shared hard negatives from each query's own candidates (the paper shares sampled
 * negatives across all positives of a batch): round-robin over queries, each taking its best
 * candidate not yet taken, so every query contributes its hardest before any contributes a second.
 */
public final class SharedNegatives {
  private SharedNegatives() {}

  /**
   * @param perQuery each query's candidates, best first
   * @return at most {@code count} distinct candidates (by {@code id}), in the order taken
   */
  public static <T> List<T> roundRobin(List<List<T>> perQuery, int count, Function<T, String> id) {
    Map<String, T> shared = new LinkedHashMap<>();
    for (int rank = 0; shared.size() < count; rank++) {
      boolean any = false;
      for (int q = 0; q < perQuery.size() && shared.size() < count; q++) {
        List<T> candidates = perQuery.get(q);
        if (rank < candidates.size()) {
          any = true;
          shared.putIfAbsent(id.apply(candidates.get(rank)), candidates.get(rank));
        }
      }
      if (!any) {
        break;
      }
    }
    return new ArrayList<>(shared.values());
  }
}
