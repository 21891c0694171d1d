package io.dynnibal.jobs.shard;

import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

/**
 * Shard numbers and the keys that route them. Flink assigns a key to a subtask through its key
 * group (a hash of the key, one of {@code maxParallelism} groups), and key groups to subtasks in
 * contiguous ranges. Shard s gets the smallest integer key whose key group is the centre of the
 * s-th of {@code shards} equal slices of the key groups: the shards sit evenly spread over the key
 * groups, so they spread evenly over the subtasks at any parallelism, and the keys never depend on
 * the parallelism - a job rescaled from a savepoint finds every shard's state under the same key.
 */
public final class ShardKeys {
  private ShardKeys() {}

  public static int[] keys(int shards, int maxParallelism) {
    if (shards > maxParallelism) {
      throw new IllegalArgumentException(
          shards
              + " shards need at least as many key groups (max parallelism "
              + maxParallelism
              + ")");
    }
    int[] keys = new int[shards];
    for (int s = 0; s < shards; s++) {
      int group =
          (int) ((2L * s + 1) * maxParallelism / (2L * shards)); // the centre of the shard's slice
      int key = 0;
      while (KeyGroupRangeAssignment.assignToKeyGroup(key, maxParallelism) != group) {
        key++;
      }
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
