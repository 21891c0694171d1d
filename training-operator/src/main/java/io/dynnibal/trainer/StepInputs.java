package io.dynnibal.trainer;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.Inclusions;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.MergedBatch;
import io.dynnibal.stream.QueryBatch;
import io.dynnibal.training.SamplingCorrection;
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

  /** The chance that the step's hard negatives include each target. */
  private final Inclusions hardInclusions = new Inclusions();

  private final int uniformCount;

  /** Targets the uniform draws came from (the shards' indexes); 0: unknown. */
  private final long indexTargets;

  /**
   * @param hardNegatives whether the shards' hard negatives join the step (not during the uniform
   *     warm-up)
   */
  StepInputs(MergedBatch merged, DualEncoder encoder, boolean hardNegatives) {
    QueryBatch batch = merged.batch;
    indexTargets = merged.indexTargets;
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
      float[] inclusion = merged.sampledInclusion;
      for (int i = 0; i < merged.sampled.length; i++) {
        addHardNegative(merged.sampled[i], inclusion == null ? 1 : inclusion[i]);
      }
    }
    for (TargetFeatures t : merged.uniform) {
      add(t);
    }
    uniformCount = merged.uniform.length;
  }

  /**
   * A hard negative, with the probability that the step's draws included it (1: chosen for
   * certain).
   */
  void addHardNegative(TargetFeatures target, double inclusion) {
    add(target);
    // One draw that includes it with that chance: sources combine as independent draws.
    hardInclusions.drawn(target.id, inclusion, 1);
  }

  private void add(TargetFeatures t) {
    negativeIds.add(t.id);
    negatives.add(Features.of(t));
  }

  boolean isEmpty() {
    return queries.isEmpty();
  }

  /**
   * The step's batch; under {@code logq} each candidate's logit is corrected by the number of times
   * the step expected it: the batch's positives and uniform draws taken as uniform over the index,
   * plus the chance the hard draws included it.
   */
  TrainingBatch batch(SamplingCorrection.Mode correction) {
    float[] offsets = null;
    if (correction == SamplingCorrection.Mode.LOGQ) {
      // Without the index's size (a batch no shard answered) the random draws count as drawn.
      double random =
          indexTargets > 0
              ? SamplingCorrection.uniformRate(queries.size() + uniformCount, indexTargets)
              : 1;
      offsets =
          SamplingCorrection.offsets(
              positiveIds, negativeIds, id -> random + hardInclusions.of(id));
    }
    return new TrainingBatch(queries, positiveIds, positives, negativeIds, negatives, offsets);
  }
}
