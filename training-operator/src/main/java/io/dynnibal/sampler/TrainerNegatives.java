package io.dynnibal.sampler;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.Inclusions;
import io.dynnibal.state.TargetFeatures;
import java.util.List;

/**
 * Hard negatives the trainer finds itself, with the state it keeps across steps and checkpoints (a
 * sampler's {@link Sampler#trainerNegatives}).
 */
public interface TrainerNegatives {

  /**
   * What a trainer's negatives are built from.
   *
   * @param outputDim the embeddings' size d
   * @param perExample negatives drawn per query ({@code negatives.per.example})
   * @param softmaxScale the scale of the softmax negatives are drawn from
   * @param seed the job's seed
   */
  record Context(int outputDim, int perExample, float softmaxScale, long seed) {}

  /** The batch's shared negatives, with how likely its draws were to include each. */
  record Drawn(List<TargetFeatures> negatives, Inclusions inclusions) {}

  /** The batch's negatives, never a query's own positive. */
  Drawn draw(DualEncoder encoder, List<Features> queries, List<String> positiveIds, long batchId);

  /** The batch's positives, after the step that trained on them. */
  void addPositives(DualEncoder encoder, List<TargetFeatures> positives);

  /** Floats held for mining (the accelerator memory a deployment would need). */
  long floats();

  /** The state to checkpoint: the entries oldest first, each embedding in {@code cache}. */
  TargetFeatures[] save();

  /** Restores what {@link #save} returned. */
  void restore(TargetFeatures[] saved);
}
