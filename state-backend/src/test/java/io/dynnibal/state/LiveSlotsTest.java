package io.dynnibal.state;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class LiveSlotsTest {
  /** After any mix of additions and removals the list holds exactly the live slots, once each. */
  @Test
  void holdsExactlyTheLiveSlots() {
    LiveSlots live = new LiveSlots(5);
    TreeSet<Integer> expected = new TreeSet<>();
    for (int slot = 0; slot < 5; slot++) {
      expected.add(slot);
    }
    SplittableRandom random = new SplittableRandom(3);
    int next = 5;
    for (int step = 0; step < 5_000; step++) {
      if (expected.isEmpty() || random.nextInt(3) > 0) {
        live.add(next);
        expected.add(next++);
      } else {
        int slot = live.get(random.nextInt(live.count()));
        live.remove(slot);
        expected.remove(slot);
      }
      assertEquals(expected.size(), live.count());
    }
    TreeSet<Integer> actual = new TreeSet<>();
    for (int i = 0; i < live.count(); i++) {
      actual.add(live.get(i));
    }
    assertEquals(expected, actual);
  }
}
