package io.dynnibal.trainer;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.features.Features;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.MergedBatch;
import io.dynnibal.stream.QueryBatch;
import io.dynnibal.training.TrainingBatch;
import java.util.ArrayList;
import java.util.List;

/**
 * A merged batch as one training step sees it: the queries whose positive some shard holds, their
 * positives, and every negative (the shards' hard and uniform ones, then any the trainer adds).
 * Queries whose positive no shard holds are listed apart, to be dead-lettered.
 */
final class StepInputs {
  final List<Features> queries = new ArrayList<>();
  final List<String> positiveIds = new ArrayList<>();
  final List<Features> positives = new ArrayList<>();
  final List<TargetFeatures> positiveTargets = new ArrayList<>();
  final List<String> trainedPairs = new ArrayList<>();
  final List<String> negativeIds = new ArrayList<>();
  final List<Features> negatives = new ArrayList<>();

  /** Indexes (in the batch) of the queries whose target is in no shard. */
  final List<Integer> unknownPositives = new ArrayList<>();

  /**
   * @param hardNegatives whether the shards' hard negatives join the step (not during the uniform
   *     warm-up)
   */
  StepInputs(MergedBatch merged, DualEncoder encoder, boolean hardNegatives) {
    QueryBatch batch = merged.batch;
    for (int q = 0; q < batch.size(); q++) {
      TargetFeatures positive = merged.positives[q];
      if (positive.id == null) {
        unknownPositives.add(q);
        continue;
      }
      queries.add(encoder.featurizeQuery(batch.queryTexts[q]));
      trainedPairs.add(batch.pairIds[q]);
      positiveIds.add(positive.id);
      positives.add(Features.of(positive));
      positiveTargets.add(positive);
    }
    if (hardNegatives) {
      addNegatives(List.of(merged.sampled));
    }
    addNegatives(List.of(merged.uniform));
  }

  void addNegatives(List<TargetFeatures> targets) {
    for (TargetFeatures t : targets) {
      negativeIds.add(t.id);
      negatives.add(Features.of(t));
    }
  }

  boolean isEmpty() {
    return queries.isEmpty();
  }

  TrainingBatch batch() {
    return new TrainingBatch(queries, positiveIds, positives, negativeIds, negatives);
  }
}
