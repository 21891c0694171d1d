package io.dynnibal.negatives;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The batch's shared hard negatives: the paper draws negatives for each training example and shares
 * them across the batch, so every query is scored against every example's negatives (and the
 * batch's positives, the in-batch negatives).
 */
public final class SharedNegatives {
  private SharedNegatives() {}

  /**
   * The union of each query's negatives, in query order, each target once (by {@code id}), leaving
   * out {@code positives}: a batch positive is already a candidate of every query, and a second
   * copy would count it twice in the softmax.
   */
  public static <T> List<T> union(
      List<List<T>> perQuery, Collection<String> positives, Function<T, String> id) {
    Map<String, T> shared = new LinkedHashMap<>();
    for (List<T> negatives : perQuery) {
      for (T t : negatives) {
        String key = id.apply(t);
        if (!positives.contains(key)) {
          shared.putIfAbsent(key, t);
        }
      }
    }
    return new ArrayList<>(shared.values());
  }
}
