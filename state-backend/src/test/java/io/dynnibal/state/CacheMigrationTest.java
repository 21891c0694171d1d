package io.dynnibal.state;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.nystrom.CacheMap;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class CacheMigrationTest {
  private static final int D = 4;

  private static HeapMapState<String, TargetFeatures> targets(int n, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    HeapMapState<String, TargetFeatures> state = new HeapMapState<>();
    for (int i = 0; i < n; i++) {
      float[] v = new float[D];
      for (int j = 0; j < D; j++) {
        v[j] = (float) random.nextGaussian();
      }
      state.put("t" + i, new TargetFeatures("t" + i, new int[] {i}, new float[] {1f}, v));
    }
    state.put("waiting", new TargetFeatures("waiting", new int[] {0}, new float[] {1f}, null));
    return state;
  }

  /** A map that doubles every coordinate. */
  private static CacheMap doubling() {
    float[] m = new float[D * D];
    for (int i = 0; i < D; i++) {
      m[i * D + i] = 2f;
    }
    return new CacheMap(D, m);
  }

  @Test
  void aMapMovesStateAndTreeAlikeAndLeavesWaitingTargetsAlone() throws Exception {
    HeapMapState<String, TargetFeatures> state = targets(200, 1);
    ShardIndex index = ShardTargets.buildIndex(state, D, 1.3, 5, id -> {});
    float[] before = state.get("t7").cache.clone();
    CacheMigration.Outcome outcome = CacheMigration.apply(state, index, 3, doubling(), g -> {}, 9);
    assertEquals(200, outcome.targetsMoved());
    assertNotNull(outcome.report());
    float[] after = state.get("t7").cache;
    for (int j = 0; j < D; j++) {
      assertEquals(2 * before[j], after[j], 1e-6);
    }
    assertEquals(3, state.get("t7").version);
    assertNull(state.get("waiting").cache);
    assertEquals(List.of(), index.checkInvariants());
  }

  @Test
  void withoutAMapEveryEncodedTargetIsReEncodedExactly() throws Exception {
    HeapMapState<String, TargetFeatures> state = targets(50, 2);
    List<String> encoded = new ArrayList<>();
    CacheMigration.Outcome outcome =
        CacheMigration.apply(
            state,
            null,
            5,
            null,
            group -> {
              for (TargetFeatures t : group) {
                encoded.add(t.id);
                t.cache = new float[] {1, 0, 0, 0};
                t.version = 5;
              }
            },
            3);
    assertEquals(50, encoded.size());
    assertNull(outcome.report(), "an exact re-encode leaves the index to be rebuilt");
    assertArrayEquals(new float[] {1, 0, 0, 0}, state.get("t0").cache);
    assertTrue(!encoded.contains("waiting"));
  }

  @Test
  void anIndexBuiltFromStateHoldsEveryEncodedTargetAndReportsTheWaitingOnes() throws Exception {
    HeapMapState<String, TargetFeatures> state = targets(30, 3);
    List<String> waiting = new ArrayList<>();
    ShardIndex index = ShardTargets.buildIndex(state, D, 1.3, 5, waiting::add);
    assertEquals(30, index.size());
    assertEquals(List.of("waiting"), waiting);
    assertTrue(index.contains("t29") && !index.contains("waiting"));
  }
}
