package io.dynnibal.trainer;

import io.dynnibal.state.TargetFeatures;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * The re-encoding regression's data for free (Alg. 4): the latest s' distinct uniform negatives the
 * trainer saw, with their features and cache vectors. Uniform negatives are uniform samples of the
 * indexed targets, so this is an unbiased sample of the index's cache (under {@code
 * negatives.pool=positives}, of the named targets: the maps fitted on them also move the targets no
 * pair has named yet). Only entries cached at the version being replaced are usable for a fit.
 */
final class RegressionReservoir {
  private final int capacity;
  private final LinkedHashMap<String, TargetFeatures> entries = new LinkedHashMap<>();

  RegressionReservoir(int capacity) {
    this.capacity = capacity;
  }

  void add(TargetFeatures target) {
    if (target.cache == null) {
      return;
    }
    entries.remove(target.id); // re-added at the end: the newest copy wins
    entries.put(target.id, target);
    if (entries.size() > capacity) {
      Iterator<String> oldest = entries.keySet().iterator();
      oldest.next();
      oldest.remove();
    }
  }

  /** Entries whose cache vector is at {@code version}, oldest first. */
  List<TargetFeatures> atVersion(long version) {
    List<TargetFeatures> out = new ArrayList<>();
    for (TargetFeatures t : entries.values()) {
      if (t.version == version) {
        out.add(t);
      }
    }
    return out;
  }

  /** Every entry, whatever its version, oldest first. */
  List<TargetFeatures> all() {
    return new ArrayList<>(entries.values());
  }

  TargetFeatures[] toArray() {
    return entries.values().toArray(new TargetFeatures[0]);
  }

  void restore(TargetFeatures[] saved) {
    entries.clear();
    for (TargetFeatures t : saved) {
      add(t);
    }
  }

  int size() {
    return entries.size();
  }
}
