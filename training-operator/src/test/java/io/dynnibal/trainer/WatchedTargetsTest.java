package io.dynnibal.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WatchedTargetsTest {
  @Test
  void countsOnlyWatchedIdsInTheOrderGiven() {
    WatchedTargets watched = new WatchedTargets(List.of(" b", "a", ""));
    watched.count(List.of("a", "x", "b", "a"));
    assertEquals(List.of("b", "a"), List.copyOf(watched.counts().keySet()));
    assertEquals(Map.of("a", 2L, "b", 1L), watched.counts());
  }

  @Test
  void aRestoreKeepsCountsOfIdsStillWatched() {
    WatchedTargets before = new WatchedTargets(List.of("a", "b"));
    before.count(List.of("a", "b", "b"));
    TrainerCheckpoint c = new TrainerCheckpoint();
    before.save(c);
    WatchedTargets after = new WatchedTargets(List.of("b", "c"));
    after.restore(c);
    assertEquals(Map.of("b", 2L, "c", 0L), after.counts());
  }
}
