package io.dynnibal.jobs.shard;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.junit.jupiter.api.Test;

class ShardKeysTest {
  @Test
  void keysAreDistinctAndDoNotDependOnParallelism() {
    int[] keys = ShardKeys.keys(6, 128);
    assertEquals(6, new HashSet<>(java.util.Arrays.stream(keys).boxed().toList()).size());
    assertArrayEquals(
        keys, ShardKeys.keys(6, 128), "keys must be a function of shards and max parallelism only");
  }

  @Test
  void shardsSpreadEvenlyOverSubtasksAtEveryParallelism() {
    for (int shards : new int[] {2, 4, 6}) {
      int[] keys = ShardKeys.keys(shards, 128);
      for (int parallelism = 1; parallelism <= shards; parallelism++) {
        int[] perSubtask = new int[parallelism];
        for (int key : keys) {
          perSubtask[KeyGroupRangeAssignment.assignKeyToParallelOperator(key, 128, parallelism)]++;
        }
        int min = java.util.Arrays.stream(perSubtask).min().orElseThrow();
        int max = java.util.Arrays.stream(perSubtask).max().orElseThrow();
        assertTrue(
            max - min <= 1,
            shards
                + " shards at parallelism "
                + parallelism
                + ": "
                + java.util.Arrays.toString(perSubtask));
      }
    }
  }

  @Test
  void targetsSpreadOverShards() {
    int[] counts = new int[4];
    for (int i = 0; i < 10_000; i++) {
      counts[ShardKeys.shardOf("target-" + i, 4)]++;
    }
    for (int c : counts) {
      assertTrue(c > 2_200 && c < 2_800, java.util.Arrays.toString(counts));
    }
    Set<Integer> same = new HashSet<>();
    for (int i = 0; i < 5; i++) {
      same.add(ShardKeys.shardOf("libfoo-dev", 4));
    }
    assertEquals(1, same.size());
  }
}
