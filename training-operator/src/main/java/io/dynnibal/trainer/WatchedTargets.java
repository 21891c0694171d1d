package io.dynnibal.trainer;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Counts how often each watched target id was used as a negative: a way to audit a sampler (e.g.
 * that a deleted target is never drawn again). Ids not watched are ignored.
 */
final class WatchedTargets {
  private final LinkedHashMap<String, Long> counts = new LinkedHashMap<>();

  WatchedTargets(List<String> ids) {
    for (String id : ids) {
      if (!id.isBlank()) {
        counts.put(id.trim(), 0L);
      }
    }
  }

  void count(List<String> negativeIds) {
    for (String id : negativeIds) {
      counts.computeIfPresent(id, (k, n) -> n + 1);
    }
  }

  /** A copy of the counts, in the order the ids were given. */
  Map<String, Long> counts() {
    return new LinkedHashMap<>(counts);
  }

  void save(TrainerCheckpoint c) {
    c.watchedIds = counts.keySet().toArray(new String[0]);
    c.watchedCounts = counts.values().stream().mapToLong(Long::longValue).toArray();
  }

  /** Restores the counts of ids still watched; ids no longer watched are dropped. */
  void restore(TrainerCheckpoint c) {
    for (int i = 0; c.watchedIds != null && i < c.watchedIds.length; i++) {
      if (counts.containsKey(c.watchedIds[i])) {
        counts.put(c.watchedIds[i], c.watchedCounts[i]);
      }
    }
  }
}
