package io.dynnibal.jobs.shard;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.FullDimensionPool;
import io.dynnibal.state.ShardIndex;
import io.dynnibal.state.TargetFeatures;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The exhaustive pool follows an index that grows between model versions. */
class ShardPoolTest {
  private static final int D = 8;

  @Test
  void aPoolOfEveryTargetTakesTheTargetsThatJoinedTheIndexSinceItWasBuilt() throws Exception {
    Map<String, TargetFeatures> state = new HashMap<>();
    try (ShardModel model = ShardModel.initial(settings());
        ShardPool pool = ShardPool.everyTarget()) {
      ShardIndex index = thirtyTargets(state, model);
      FullDimensionPool first = pool.forBatch(0, model, index, state::get, 1);
      assertEquals(30, first.size());
      assertSame(first, pool.forBatch(1, model, index, state::get, 1), "nothing joined: kept");

      for (int i = 30; i < 34; i++) {
        float[] v = new float[D];
        v[i % D] = 1;
        index.upsert(store(state, model, "t" + i), v);
      }
      index.delete("t3");
      FullDimensionPool grown = pool.forBatch(2, model, index, state::get, 1);
      assertEquals(34, grown.size(), "the four newcomers joined (t3 is skipped when offered)");
      float[] query = model.encoder.encodeQueries(List.of(model.encoder.featurizeQuery("x")))[0];
      float[] expected = model.encoder.encodeTargets(List.of(Features.of(state.get("t32"))))[0];
      float[] scores = grown.scoreAll(new float[][] {query});
      double dot = 0;
      for (int j = 0; j < expected.length; j++) {
        dot += expected[j] * query[j];
      }
      assertArrayEquals(
          new float[] {(float) dot}, new float[] {scores[grown.memberOf("t32")]}, 1e-4f);
    }
  }

  @Test
  void aGradualRebuildAnswersNothingUntilEverySliceIsEncodedThenThePoolAtOnceWould()
      throws Exception {
    Map<String, TargetFeatures> state = new HashMap<>();
    try (ShardModel model = ShardModel.initial(settings());
        ShardPool gradual = ShardPool.everyTarget();
        ShardPool atOnce = ShardPool.everyTarget()) {
      ShardIndex index = thirtyTargets(state, model);
      for (long batch = 0; batch < 3; batch++) {
        assertNull(gradual.forBatchGradually(batch, model, index, state::get, 1, 8), "" + batch);
        if (batch == 1) {
          for (String deleted : List.of("t2", "t27")) { // t2 encoded already: stays; t27 left out
            state.remove(deleted);
            index.delete(deleted);
          }
          float[] v = new float[D];
          v[0] = 2;
          index.upsert(store(state, model, "late"), v); // joined during the rebuild
        }
      }
      FullDimensionPool pool = gradual.forBatchGradually(3, model, index, state::get, 1, 8);
      assertNotNull(pool, "30 targets in slices of 8: the fourth batch completes it");
      assertEquals(-1, pool.memberOf("t27"));
      assertTrue(pool.memberOf("t2") >= 0 && pool.memberOf("late") >= 0);
      assertEquals(30, pool.size());
      FullDimensionPool reference = atOnce.forBatch(3, model, index, state::get, 1);
      float[] query = model.encoder.encodeQueries(List.of(model.encoder.featurizeQuery("x")))[0];
      float[] scores = pool.scoreAll(new float[][] {query});
      float[] expected = reference.scoreAll(new float[][] {query});
      for (String id : pool.ids()) {
        if (reference.memberOf(id) >= 0) {
          assertEquals(expected[reference.memberOf(id)], scores[pool.memberOf(id)], 1e-5f, id);
        }
      }
      assertSame(pool, gradual.forBatchGradually(4, model, index, state::get, 1, 8), "kept");
    }
  }

  private static ShardSettings settings() {
    return ShardSettings.of(
        new TrainingJobConfig()
            .apply("sampler", "exhaustive")
            .apply("model.buckets", "4096")
            .apply("model.embedding.dim", "16")
            .apply("model.hidden.dim", "32")
            .apply("model.output.dim", "16")
            .apply("landmarks", Integer.toString(D))
            .apply("regression.samples", "16")
            .validate());
  }

  /** Targets t0..t29 stored in {@code state} and indexed. */
  private static ShardIndex thirtyTargets(Map<String, TargetFeatures> state, ShardModel model) {
    List<String> ids = new ArrayList<>();
    List<float[]> vectors = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      ids.add(store(state, model, "t" + i));
      vectors.add(new float[D]);
      vectors.get(i)[i % D] = 1 + i;
    }
    return ShardIndex.build(D, 1.3, ids, vectors, 3);
  }

  private static String store(Map<String, TargetFeatures> state, ShardModel model, String id) {
    Features f = model.encoder.featurizeTarget("text of " + id + " with words " + id.length());
    state.put(id, new TargetFeatures(id, f.ids(), f.weights(), null));
    return id;
  }
}
