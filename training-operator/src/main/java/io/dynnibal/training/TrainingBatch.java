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
 *
 * <p>{@code columnOffsets}, when not null, are added to every candidate's logit (positives first,
 * then negatives) except on the diagonal: the {@link SamplingCorrection}.
 */
public record TrainingBatch(
    List<Features> queries,
    List<String> positiveIds,
    List<Features> positives,
    List<String> negativeIds,
    List<Features> negatives,
    float[] columnOffsets) {

  /** A batch whose candidates count as drawn (no sampling correction). */
  public TrainingBatch(
      List<Features> queries,
      List<String> positiveIds,
      List<Features> positives,
      List<String> negativeIds,
      List<Features> negatives) {
    this(queries, positiveIds, positives, negativeIds, negatives, null);
  }

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
    if (columnOffsets != null && columnOffsets.length != positives.size() + negatives.size()) {
      throw new IllegalArgumentException(
          columnOffsets.length
              + " column offsets for "
              + (positives.size() + negatives.size())
              + " candidates");
    }
  }

  public int size() {
    return queries.size();
  }
}
