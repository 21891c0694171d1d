package io.dynnibal.state;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ShardIndexTest {
  private static final int D = 8;

  private static float[] random(SplittableRandom random) {
    float[] v = new float[D];
    for (int j = 0; j < D; j++) {
      v[j] = (float) random.nextGaussian();
    }
    return v;
  }

  /**
   * Targets upserted into a growing index, a tenth of them replacing earlier ones: every target
   * ends up once, with its latest vector, in a sound tree.
   */
  @Test
  void upsertedTargetsEndUpInASoundTreeWithTheirLatestVectors() {
    SplittableRandom random = new SplittableRandom(5);
    ShardIndex index = ShardIndex.empty(D, 1.3);
    Map<String, float[]> expected = new HashMap<>();
    for (int group = 0; group < 12; group++) {
      List<String> ids = new ArrayList<>();
      List<float[]> vectors = new ArrayList<>();
      for (int i = 0; i < 512; i++) {
        // A tenth of each group replaces a target of an earlier group.
        String id =
            group > 0 && i % 10 == 0 ? "t" + random.nextInt(group * 512) : "t" + (group * 512 + i);
        if (ids.contains(id)) {
          continue;
        }
        float[] v = random(random);
        ids.add(id);
        vectors.add(v);
        expected.put(id, v);
      }
      for (int i = 0; i < ids.size(); i++) {
        index.upsert(ids.get(i), vectors.get(i));
      }
    }
    assertEquals(List.of(), index.checkInvariants());
    assertEquals(expected.size(), index.size());
    for (Map.Entry<String, float[]> e : expected.entrySet()) {
      assertArrayEquals(e.getValue(), index.vectorOf(e.getKey()), e.getKey());
    }
    assertEquals(expected.size(), index.ids().size());
  }

  @Test
  void aDeletedTargetLeavesTheTree() {
    SplittableRandom random = new SplittableRandom(6);
    ShardIndex index = ShardIndex.empty(D, 1.3);
    List<String> ids = new ArrayList<>();
    List<float[]> vectors = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      ids.add("t" + i);
      vectors.add(random(random));
    }
    for (int i = 0; i < ids.size(); i++) {
      index.upsert(ids.get(i), vectors.get(i));
    }
    assertEquals(ids.size(), index.size());
    index.delete("t7");
    assertFalse(index.contains("t7"));
    assertEquals(ids.size() - 1, index.size());
    assertEquals(List.of(), index.checkInvariants());
  }
}
