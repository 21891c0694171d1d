package io.dynnibal.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class TargetIdsTest {
  /**
   * Random adds and removals over a small id space (long probe clusters), ids of mixed lengths and
   * scripts, agree with a HashMap and a list of slots.
   */
  @Test
  void agreesWithAHashMapUnderRandomAddsAndRemovals() {
    SplittableRandom random = new SplittableRandom(3);
    TargetIds ids = new TargetIds();
    Map<String, Integer> expected = new HashMap<>();
    List<String> idOfSlot = new ArrayList<>();
    for (int op = 0; op < 200_000; op++) {
      int n = random.nextInt(3_000);
      String id =
          n % 3 == 0 ? "t" + n : n % 3 == 1 ? "paquet-é-" + n : "語" + n + "x".repeat(n % 40);
      if (expected.containsKey(id) && random.nextInt(2) == 0) {
        int slot = expected.remove(id);
        assertEquals(slot, ids.remove(id), id);
        idOfSlot.set(slot, null);
      } else if (expected.containsKey(id)) {
        assertEquals(expected.get(id), ids.slotOf(id), id);
      } else {
        int slot = ids.add(id);
        assertEquals(idOfSlot.size(), slot, "slots are given in order");
        idOfSlot.add(id);
        expected.put(id, slot);
      }
      if (op % 5000 == 0) {
        for (int i = 0; i < 3_000; i++) {
          for (String probe : List.of("t" + i, "paquet-é-" + i, "語" + i + "x".repeat(i % 40))) {
            assertEquals(expected.getOrDefault(probe, -1), ids.slotOf(probe), probe);
          }
        }
        for (int slot = 0; slot < idOfSlot.size(); slot++) {
          assertEquals(idOfSlot.get(slot), ids.idOf(slot));
        }
        assertEquals(expected.size(), ids.size());
        assertEquals(idOfSlot.size(), ids.slots());
      }
    }
  }

  @Test
  void anIdIsAddedOnceAndARemovedSlotHasNoId() {
    TargetIds ids = new TargetIds();
    assertEquals(0, ids.add("a"));
    assertEquals(1, ids.add(""));
    assertThrows(IllegalArgumentException.class, () -> ids.add("a"));
    assertEquals(-1, ids.remove("b"));
    assertEquals(0, ids.remove("a"));
    assertNull(ids.idOf(0));
    assertEquals("", ids.idOf(1));
    assertEquals(2, ids.add("a"), "a removed id comes back with a new slot");
    assertThrows(IndexOutOfBoundsException.class, () -> ids.idOf(3));
  }
}
