package io.dynnibal.state;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class SlotsByIdTest {
  /**
   * Random puts, overwrites and removals over a small id space (long probe clusters) agree with a
   * HashMap.
   */
  @Test
  void agreesWithAHashMapUnderRandomPutsAndRemovals() {
    SplittableRandom random = new SplittableRandom(3);
    SlotsById slots = new SlotsById();
    Map<String, Integer> expected = new HashMap<>();
    for (int op = 0; op < 200_000; op++) {
      String id = "t" + random.nextInt(3_000);
      if (random.nextInt(3) == 0) {
        assertEquals(expected.getOrDefault(id, -1), slots.remove(id), id);
        expected.remove(id);
      } else {
        int slot = random.nextInt(1 << 20);
        slots.put(id, slot);
        expected.put(id, slot);
      }
      if (op % 1000 == 0) {
        for (int i = 0; i < 3_000; i++) {
          assertEquals(expected.getOrDefault("t" + i, -1), slots.get("t" + i));
        }
        assertEquals(expected.size(), slots.size());
      }
    }
  }
}
