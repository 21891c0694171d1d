package io.dynnibal.training;

import io.dynnibal.model.features.Features;
import java.util.List;

/**
 * One step's input: B queries with their positive targets, and negatives shared by the whole batch
 * (sampled by an index and/or uniform). Every positive is also an in-batch negative for the other
 * queries.
 *
 * <p>Target ids decide masking: a candidate with the same id as a query's positive is never that
 * query's negative.
 */
public record TrainingBatch(
    List<Features> queries,
    List<String> positiveIds,
    List<Features> positives,
    List<String> negativeIds,
    List<Features> negatives) {

  public TrainingBatch {
    if (queries.isEmpty()) {
      throw new IllegalArgumentException("a batch needs at least one query");
    }
    if (positiveIds.size() != queries.size() || positives.size() != queries.size()) {
      throw new IllegalArgumentException(
          queries.size()
              + " queries but "
              + positiveIds.size()
              + " positive ids and "
              + positives.size()
              + " positives");
    }
    if (negativeIds.size() != negatives.size()) {
      throw new IllegalArgumentException(
          negativeIds.size() + " negative ids but " + negatives.size() + " negatives");
    }
  }

  public int size() {
    return queries.size();
  }
}
