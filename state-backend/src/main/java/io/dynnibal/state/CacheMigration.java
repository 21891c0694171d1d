package io.dynnibal.state;

import io.dynnibal.index.nystrom.CacheMap;

/**
 * Moves one shard key's cache to a new model version, in its state and its heap index.
 *
 * <p>An update that follows the current version (v-1 to v) is applied as the trainer's d' x d' map:
 * the state composes it into its per-base maps ({@link ShardTargets#move}, no target rewritten),
 * and the heap index into its tree's frame ({@link ShardIndex#move}: no vector moves while the
 * frame stays well conditioned; past that the vectors move and only the broken subtrees are
 * rebuilt). An update that skips versions cannot be applied as a map (maps go from v-1 to v), so
 * every target is re-encoded exactly from its text, and the heap index must be rebuilt from the
 * state.
 *
 * <p>Targets still waiting to be encoded are left alone: they will be encoded with the model
 * current then.
 */
public final class CacheMigration {
  /** Targets re-encoded per forward pass. */
  public static final int GROUP = 512;

  /**
   * @param index how a map update moved the heap index; null when the index was re-encoded exactly
   *     (and must be rebuilt) or there was no heap index
   */
  public record Outcome(int targetsMoved, ShardIndex.Moved index) {}

  private CacheMigration() {}

  /**
   * @param map the update's cache map, or null to re-encode exactly with {@code exact}
   * @param index the key's heap index, or null when none is built yet
   */
  public static Outcome apply(
      ShardTargets targets,
      ShardIndex index,
      long currentVersion,
      long newVersion,
      CacheMap map,
      ShardTargets.ExactEncoder exact,
      long seed)
      throws Exception {
    if (map == null) {
      return new Outcome(targets.reencode(exact, newVersion, GROUP), null);
    }
    int moved = targets.move(map, currentVersion);
    return new Outcome(moved, index != null ? index.move(map, seed) : null);
  }
}
