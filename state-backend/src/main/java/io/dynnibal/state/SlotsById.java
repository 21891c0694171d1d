package io.dynnibal.state;

/**
 * Target id to tree slot, by open addressing with linear probing: two parallel arrays, about 14
 * bytes per target at the maximum load of 0.6, where a {@code HashMap<String, Integer>} costs about
 * 50 (entry, boxed slot, table). A shard holds one entry per target, so this is per-target heap.
 *
 * <p>Invariant: every id sits in the first free-or-matching position of its probe sequence (kept on
 * removal by shifting later entries back, so no tombstones accumulate).
 */
final class SlotsById {
  private static final float MAX_LOAD = 0.6f;

  private String[] ids = new String[16];
  private int[] slots = new int[16];
  private int size;

  /** The id's slot, or -1. */
  int get(String id) {
    int mask = ids.length - 1;
    for (int i = hash(id) & mask; ids[i] != null; i = (i + 1) & mask) {
      if (ids[i].equals(id)) {
        return slots[i];
      }
    }
    return -1;
  }

  /** Sets the id's slot (a slot is >= 0). */
  void put(String id, int slot) {
    if (size + 1 > MAX_LOAD * ids.length) {
      grow();
    }
    int mask = ids.length - 1;
    int i = hash(id) & mask;
    while (ids[i] != null && !ids[i].equals(id)) {
      i = (i + 1) & mask;
    }
    if (ids[i] == null) {
      size++;
    }
    ids[i] = id;
    slots[i] = slot;
  }

  /** Removes the id; returns its slot, or -1 if it was absent. */
  int remove(String id) {
    int mask = ids.length - 1;
    int i = hash(id) & mask;
    while (ids[i] != null && !ids[i].equals(id)) {
      i = (i + 1) & mask;
    }
    if (ids[i] == null) {
      return -1;
    }
    int slot = slots[i];
    size--;
    // Shift back every later entry of the cluster that the hole now separates from its home.
    int hole = i;
    for (int j = (i + 1) & mask; ids[j] != null; j = (j + 1) & mask) {
      int home = hash(ids[j]) & mask;
      boolean movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
      if (movable) {
        ids[hole] = ids[j];
        slots[hole] = slots[j];
        hole = j;
      }
    }
    ids[hole] = null;
    return slot;
  }

  int size() {
    return size;
  }

  private void grow() {
    String[] oldIds = ids;
    int[] oldSlots = slots;
    ids = new String[oldIds.length * 2];
    slots = new int[oldIds.length * 2];
    size = 0;
    for (int i = 0; i < oldIds.length; i++) {
      if (oldIds[i] != null) {
        put(oldIds[i], oldSlots[i]);
      }
    }
  }

  private static int hash(String id) {
    int h = id.hashCode() * 0x9E3779B9; // spreads the String hash's low bits
    return h ^ (h >>> 16);
  }
}
