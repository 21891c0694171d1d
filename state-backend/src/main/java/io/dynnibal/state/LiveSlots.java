package io.dynnibal.state;

import java.util.Arrays;

/**
 * The live slots of a shard's index as a dense list, for uniform draws in constant time.
 *
 * <p>Invariant: {@code live[0 .. count)} holds every live slot exactly once, and {@code
 * positionOf[live[i]] == i} for {@code i < count}; a removal moves the last live slot into the
 * hole.
 */
final class LiveSlots {
  private int[] live;
  private int[] positionOf;
  private int count;

  /** Slots {@code 0} to {@code count - 1}, all live, in order. */
  LiveSlots(int count) {
    this.count = count;
    live = new int[Math.max(1024, count)];
    positionOf = new int[Math.max(1024, count)];
    for (int slot = 0; slot < count; slot++) {
      live[slot] = slot;
      positionOf[slot] = slot;
    }
  }

  /** How many slots are live. */
  int count() {
    return count;
  }

  /** The {@code i}-th live slot, {@code i < count()}; the order changes on removal. */
  int get(int i) {
    return live[i];
  }

  /** Adds a slot that is not live. */
  void add(int slot) {
    if (slot >= positionOf.length) {
      positionOf = Arrays.copyOf(positionOf, Math.max(slot + 1, positionOf.length * 2));
    }
    if (count == live.length) {
      live = Arrays.copyOf(live, live.length * 2);
    }
    live[count] = slot;
    positionOf[slot] = count;
    count++;
  }

  /** Removes a live slot. */
  void remove(int slot) {
    int position = positionOf[slot];
    int last = live[--count];
    live[position] = last;
    positionOf[last] = position;
  }
}
