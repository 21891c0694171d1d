package io.dynnibal.state;

import io.dynnibal.index.nystrom.CacheMap;
import io.dynnibal.index.sgtree.TreeRepair;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.state.MapState;

/**
 * Moves one shard key's cache to a new model version, in its state and its heap index.
 *
 * <p>An update that follows the current version (v-1 to v) is applied as the trainer's d' x d' map:
 * every stored cache vector is multiplied in place, the tree's vectors likewise, and {@link
 * TreeRepair} rebuilds only the subtrees the drift can have broken. An update that skips versions
 * cannot be applied as a map (maps go from v-1 to v), so every target is re-encoded exactly from
 * its stored features, and the heap index must be rebuilt from the state.
 *
 * <p>Targets still waiting to be encoded are left alone: they will be encoded with the model
 * current then.
 */
public final class CacheMigration {
  /** Sets {@code cache} and {@code version} of each target with the new model's encoder. */
  @FunctionalInterface
  public interface ExactEncoder {
    void encode(List<TargetFeatures> targets) throws Exception;
  }

  /**
   * @param report the tree repair of a map update; null when the index was re-encoded exactly (and
   *     must be rebuilt) or there was no heap index
   */
  public record Outcome(int targetsMoved, TreeRepair.Report report) {}

  private CacheMigration() {}

  /**
   * @param map the update's cache map, or null to re-encode exactly with {@code exact}
   * @param index the key's heap index, or null when none is built yet
   */
  public static Outcome apply(
      MapState<String, TargetFeatures> targets,
      ShardIndex index,
      long newVersion,
      CacheMap map,
      ExactEncoder exact,
      long seed)
      throws Exception {
    List<TargetFeatures> moved = new ArrayList<>();
    float[] scratch = map == null ? null : new float[map.dimension()];
    for (Map.Entry<String, TargetFeatures> entry : targets.entries()) {
      TargetFeatures t = entry.getValue();
      if (t.cache == null) {
        continue;
      }
      if (map != null) {
        map.applyInPlace(t.cache, scratch);
        t.version = newVersion;
      }
      moved.add(t);
    }
    if (map == null) {
      exact.encode(moved);
    }
    for (TargetFeatures t : moved) {
      targets.put(t.id, t);
    }
    TreeRepair.Report report = index != null && map != null ? index.move(map, seed) : null;
    return new Outcome(moved.size(), report);
  }
}
