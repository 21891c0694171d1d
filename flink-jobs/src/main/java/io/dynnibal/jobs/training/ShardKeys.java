package io.dynnibal.jobs.training;

import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

/**
 * Shard numbers and the keys that route them. Flink assigns a key to a subtask through its key group (a hash), so
 * keys 0..S-1 can land on the same subtask by chance; the key of shard s is chosen as the smallest integer whose key
 * group falls on subtask {@code s mod parallelism}, which spreads shards evenly. On rescale the key groups move, and
 * with them whole shards.
 */
public final class ShardKeys {
  private ShardKeys() {}

  public static int[] keys(int shards, int parallelism, int maxParallelism) {
    int[] keys = new int[shards];
    java.util.Set<Integer> used = new java.util.HashSet<>();
    for (int s = 0; s < shards; s++) {
      int wanted = s % parallelism;
      int key = 0;
      while (used.contains(key)
          || KeyGroupRangeAssignment.assignKeyToParallelOperator(key, maxParallelism, parallelism) != wanted) {
        key++;
      }
      used.add(key);
      keys[s] = key;
    }
    return keys;
  }

  /** The shard that owns a target: a stable hash of its id. */
  public static int shardOf(String targetId, int shards) {
    return Math.floorMod(murmur(targetId), shards);
  }

  private static int murmur(String s) {
    int h = 0x9747b28c;
    for (int i = 0; i < s.length(); i++) {
      int k = s.charAt(i) * 0xcc9e2d51;
      k = Integer.rotateLeft(k, 15) * 0x1b873593;
      h ^= k;
      h = Integer.rotateLeft(h, 13) * 5 + 0xe6546b64;
    }
    h ^= s.length();
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    return h ^ (h >>> 16);
  }
}
