package io.dynnibal.sampler;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.Inclusions;
import io.dynnibal.negatives.NegativeCache;
import io.dynnibal.negatives.SharedNegatives;
import io.dynnibal.state.TargetFeatures;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The {@code negative-cache} sampler as the trainer runs it: a FIFO of the positives it trained on
 * with their embeddings at the time, and a softmax over it for each query's negatives.
 */
final class TrainerNegativeCache implements TrainerNegatives {
  private final NegativeCache<TargetFeatures> cache;
  private final int perExample;
  private final float softmaxScale;
  private final long seed;

  /** A cache of the last {@code size} positives trained on. */
  TrainerNegativeCache(int size, Context context) {
    this.cache = new NegativeCache<>(size, context.outputDim());
    this.perExample = context.perExample();
    this.softmaxScale = context.softmaxScale();
    this.seed = context.seed();
  }

  /**
   * Each query draws {@code negatives.per.example} targets from the softmax over the cache (its
   * current query embedding against the cached, stale target embeddings), its own positive excluded
   * (drawn again, a few rounds at most); the batch shares the union like the shards' hard
   * negatives. Lindgren et al.'s cache samples, so it does so in either negatives mode.
   */
  @Override
  public Drawn draw(
      DualEncoder encoder, List<Features> queries, List<String> positiveIds, long batchId) {
    Inclusions inclusions = new Inclusions();
    if (cache.size() == 0) {
      return new Drawn(List.of(), inclusions);
    }
    SplittableRandom random = new SplittableRandom(seed * 0x2545F4914F6CDD1DL + batchId);
    float[][] embedded = encoder.encodeQueries(queries);
    List<List<TargetFeatures>> candidates = new ArrayList<>();
    for (int q = 0; q < embedded.length; q++) {
      candidates.add(new ArrayList<>());
    }
    for (int round = 0; round < 4; round++) {
      List<List<NegativeCache.Draw<TargetFeatures>>> drawn =
          cache.sample(encoder.manager(), embedded, perExample, softmaxScale, random);
      boolean anyShort = false;
      for (int q = 0; q < drawn.size(); q++) {
        List<TargetFeatures> own = candidates.get(q);
        for (NegativeCache.Draw<TargetFeatures> d : drawn.get(q)) {
          NegativeCache.Entry<TargetFeatures> e = d.entry();
          if (own.size() < perExample && !e.id().equals(positiveIds.get(q))) {
            if (own.stream().noneMatch(t -> t.id.equals(e.id()))) {
              // A query's k draws include the target with 1 - (1 - p)^k, however often it came.
              inclusions.drawn(e.id(), d.probability(), perExample);
            }
            own.add(e.payload());
          }
        }
        anyShort |= own.size() < perExample;
      }
      if (!anyShort) {
        break;
      }
    }
    return new Drawn(
        SharedNegatives.union(candidates, new HashSet<>(positiveIds), t -> t.id), inclusions);
  }

  /** The batch's positives enter with their embeddings under the parameters just updated. */
  @Override
  public void addPositives(DualEncoder encoder, List<TargetFeatures> positives) {
    float[][] embedded = encoder.encodeTargets(positives.stream().map(Features::of).toList());
    for (int i = 0; i < positives.size(); i++) {
      cache.add(positives.get(i).id, positives.get(i), embedded[i]);
    }
  }

  @Override
  public long floats() {
    return cache.floats();
  }

  @Override
  public TargetFeatures[] save() {
    return cache.entries().stream()
        .map(
            e -> {
              TargetFeatures t = e.payload().withoutCache(0f);
              t.cache = e.embedding();
              return t;
            })
        .toArray(TargetFeatures[]::new);
  }

  @Override
  public void restore(TargetFeatures[] saved) {
    for (TargetFeatures t : saved) {
      cache.add(t.id, t.withoutCache(0f), t.cache);
    }
  }
}
