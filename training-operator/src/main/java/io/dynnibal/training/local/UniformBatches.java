package io.dynnibal.training.local;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.features.Features;
import io.dynnibal.training.TrainingBatch;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Training batches of random pairs with uniform negatives, for runs that time or compare the
 * trainer (benchmarks, the GPU smoke): a step costs the same whichever targets the negatives are,
 * so uniform ones time the trainer as mined ones would, and one seed gives the same batches on
 * every device.
 */
public final class UniformBatches {
  private UniformBatches() {}

  /**
   * A batch of {@code size} training pairs drawn uniformly (pairs whose target is not in {@code
   * index} are drawn again), queries featurized by {@code encoder}, positives and {@code negatives}
   * uniform negatives taken from {@code targetFeatures}.
   */
  public static TrainingBatch draw(
      List<LabelledQuery> train,
      List<TargetText> targets,
      List<Features> targetFeatures,
      Map<String, Integer> index,
      DualEncoder encoder,
      int size,
      int negatives,
      Random random) {
    List<Features> queries = new ArrayList<>(size);
    List<String> positiveIds = new ArrayList<>(size);
    List<Features> positives = new ArrayList<>(size);
    while (queries.size() < size) {
      LabelledQuery q = train.get(random.nextInt(train.size()));
      Integer t = index.get(q.targetId());
      if (t != null) {
        queries.add(encoder.featurizeQuery(q.text()));
        positiveIds.add(q.targetId());
        positives.add(targetFeatures.get(t));
      }
    }
    List<String> negativeIds = new ArrayList<>(negatives);
    List<Features> negativeFeatures = new ArrayList<>(negatives);
    for (int i = 0; i < negatives; i++) {
      int t = random.nextInt(targets.size());
      negativeIds.add(targets.get(t).targetId());
      negativeFeatures.add(targetFeatures.get(t));
    }
    return new TrainingBatch(queries, positiveIds, positives, negativeIds, negativeFeatures);
  }
}
