package io.dynnibal.trainer;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.NegativeCache;
import io.dynnibal.negatives.SharedNegatives;
import io.dynnibal.state.TargetFeatures;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The {@code negative-cache} sampler as the trainer runs it: a FIFO of the positives it trained on
 * with their embeddings at the time, and a softmax over it for each query's negatives.
 */
final class TrainerNegativeCache {
  private final NegativeCache<TargetFeatures> cache;
  private final int perQuery;
  private final int shared;
  private final float scoreScale;
  private final long seed;

  TrainerNegativeCache(TrainerSettings settings) {
    this.cache = new NegativeCache<>(settings.negativeCacheSize(), settings.model().outputDim());
    this.perQuery = settings.negativesPerQuery();
    this.shared = settings.negativesSampled();
    this.scoreScale = settings.model().scoreScale();
    this.seed = settings.seed();
  }

  /**
   * Each query draws {@code negatives.per.query} targets from the softmax over the cache (its
   * current query embedding against the cached, stale target embeddings), its own positive
   * excluded; the batch shares them round-robin like the shards' hard negatives.
   */
  List<TargetFeatures> draw(
      DualEncoder encoder, List<Features> queries, List<String> positiveIds, long batchId) {
    if (cache.size() == 0) {
      return List.of();
    }
    SplittableRandom random = new SplittableRandom(seed * 0x2545F4914F6CDD1DL + batchId);
    float[][] embedded = encoder.encodeQueries(queries);
    List<List<NegativeCache.Entry<TargetFeatures>>> drawn =
        cache.sample(encoder.manager(), embedded, perQuery, scoreScale, random);
    List<List<TargetFeatures>> candidates = new ArrayList<>();
    for (int q = 0; q < drawn.size(); q++) {
      List<TargetFeatures> own = new ArrayList<>();
      for (NegativeCache.Entry<TargetFeatures> e : drawn.get(q)) {
        if (!e.id().equals(positiveIds.get(q))) {
          own.add(e.payload());
        }
      }
      candidates.add(own);
    }
    return SharedNegatives.roundRobin(candidates, shared, t -> t.id);
  }

  /** The batch's positives enter with their embeddings under the parameters just updated. */
  void addPositives(DualEncoder encoder, List<TargetFeatures> positives) {
    float[][] embedded = encoder.encodeTargets(positives.stream().map(Features::of).toList());
    for (int i = 0; i < positives.size(); i++) {
      cache.add(positives.get(i).id, positives.get(i), embedded[i]);
    }
  }

  /** Floats held for mining (the accelerator memory a deployment would need). */
  long floats() {
    return cache.floats();
  }

  /** The entries oldest first, each embedding in {@code cache}. */
  TargetFeatures[] save() {
    return cache.entries().stream()
        .map(
            e -> {
              TargetFeatures t = e.payload().withoutCache(0f);
              t.cache = e.embedding();
              return t;
            })
        .toArray(TargetFeatures[]::new);
  }

  void restore(TargetFeatures[] saved) {
    for (TargetFeatures t : saved) {
      cache.add(t.id, t.withoutCache(0f), t.cache);
    }
  }
}
