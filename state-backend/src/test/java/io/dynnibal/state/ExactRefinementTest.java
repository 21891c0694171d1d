package io.dynnibal.state;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.nystrom.CacheMap;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * An exact update applied by its map first, then re-encoded a group per batch: every target ends up
 * exact at the current version, each once, across a restore and a later map, and the state's bases
 * count what they hold.
 */
class ExactRefinementTest {
  private static final int D = 2;

  private final HeapMapState<String, TargetFeatures> map =
      new HeapMapState<>(ShardTargetsTest::copy);
  private final HeapValueState<CacheBases> bases = new HeapValueState<>();
  private final HeapValueState<Long> dueBefore = new HeapValueState<>();
  private final ShardTargets targets =
      new ShardTargets(
          map,
          bases,
          t -> {
            t.featureIds = new int[] {t.text.length()};
            t.featureWeights = new float[] {1f};
          });
  private final List<String> encoded = new ArrayList<>();

  /** The exact encoder of "version" {@code v}: a target's vector is {v, its number}. */
  private ShardTargets.ExactEncoder exactAt(long v) {
    return group -> {
      for (TargetFeatures t : group) {
        encoded.add(t.id);
        t.cache = new float[] {v, Integer.parseInt(t.id.substring(1))};
        t.version = v;
      }
    };
  }

  private void encode(int from, int to, long version) throws Exception {
    List<TargetFeatures> group = new ArrayList<>();
    for (int i = from; i < to; i++) {
      targets.store("t" + i, "text " + i, version);
      group.add(targets.withFeatures("t" + i));
    }
    exactAt(version).encode(group);
    targets.encoded(group, version);
    encoded.clear();
  }

  private static CacheMap doubling() {
    return new CacheMap(D, new float[] {2, 0, 0, 2});
  }

  private long total(CacheBases b) {
    long n = 0;
    for (long c : b.counts) {
      n += c;
    }
    return n;
  }

  @Test
  void everyMappedTargetIsReEncodedOnceAGroupAtATime() throws Exception {
    encode(0, 25, 0);
    targets.move(doubling(), 0); // version 1 arrives marked exact: its map first
    ExactRefinement refinement = new ExactRefinement(dueBefore);
    refinement.start(0, 1);
    encode(25, 28, 1); // encoded after the update: already exact, not due
    int steps = 0;
    ExactRefinement.Step step;
    do {
      step = refinement.step(0, targets, 10, exactAt(1), 1);
      steps++;
      for (TargetFeatures t : step.reencoded()) {
        assertArrayEquals(new float[] {1, Integer.parseInt(t.id.substring(1))}, t.cache);
      }
    } while (!step.finished());
    assertEquals(3, steps);
    assertEquals(3, step.stepsSoFar());
    assertEquals(25, step.reencodedSoFar(), "the refinement's totals, for its log");
    assertEquals(25, encoded.size());
    assertEquals(25, new HashSet<>(encoded).size(), "each once");
    assertFalse(encoded.contains("t26"));
    assertFalse(refinement.pending());
    assertEquals(1, bases.value().size(), "one base left: the current version");
    assertEquals(28, total(bases.value()));
    assertArrayEquals(new float[] {1, 7}, map.get("t7").cache);
    assertEquals(1, map.get("t7").version);
  }

  @Test
  void whatIsDueSurvivesARestoreAndALaterMap() throws Exception {
    encode(0, 30, 0);
    targets.move(doubling(), 0);
    new ExactRefinement(dueBefore).start(0, 1);
    ExactRefinement before = new ExactRefinement(dueBefore);
    String early = before.step(0, targets, 10, exactAt(1), 1).reencoded().get(0).id;
    // Restored: a new operator instance, the same state. A map update (to 2) lands meanwhile.
    targets.move(doubling(), 1);
    ExactRefinement after = new ExactRefinement(dueBefore);
    assertTrue(after.pending());
    encoded.clear();
    ExactRefinement.Step step;
    do {
      step = after.step(0, targets, 7, exactAt(2), 2);
    } while (!step.finished());
    assertEquals(20, encoded.size(), "the 10 re-encoded before the restore are not due again");
    Set<Long> versions = new HashSet<>();
    for (TargetFeatures t : map.values()) {
      versions.add(t.version);
    }
    assertEquals(Set.of(1L, 2L), versions);
    assertEquals(30, total(bases.value()));
    // One re-encoded at 1 before the map to 2 is moved by it like any target.
    assertFalse(encoded.contains(early));
    float n = Integer.parseInt(early.substring(1));
    assertArrayEquals(
        new float[] {2, 2 * n}, targets.shippedWithCache(List.of(early), 2).get(0).cache, 1e-6f);
  }

  @Test
  void aTargetRemovedOrStoredAgainWhileDueIsSkipped() throws Exception {
    encode(0, 10, 0);
    targets.move(doubling(), 0);
    ExactRefinement refinement = new ExactRefinement(dueBefore);
    refinement.start(0, 1);
    refinement.step(0, targets, 1, exactAt(1), 1); // reads what is due
    encoded.clear();
    targets.remove("t3", 1);
    targets.store("t4", "changed", 1);
    ExactRefinement.Step step;
    do {
      step = refinement.step(0, targets, 100, exactAt(1), 1);
    } while (!step.finished());
    assertFalse(encoded.contains("t3"));
    assertFalse(encoded.contains("t4"));
    assertEquals(7, encoded.size());
  }

  @Test
  void cancellingLeavesNothingDue() throws Exception {
    encode(0, 5, 0);
    ExactRefinement refinement = new ExactRefinement(dueBefore);
    refinement.start(0, 1);
    refinement.cancel(0);
    assertFalse(refinement.pending());
    ExactRefinement.Step step = refinement.step(0, targets, 10, exactAt(1), 1);
    assertTrue(step.reencoded().isEmpty());
    assertFalse(step.finished());
  }

  /**
   * Map updates during a refinement, each followed by new targets, until the bases overflow and the
   * older targets are rewritten at the current version by their maps: those rewritten are still
   * due, every original target is re-encoded exactly once, and the bases count every target once.
   */
  @Test
  void aRebaseDuringTheRefinementLeavesItsTargetsDue() throws Exception {
    encode(0, 40, 0);
    targets.move(doubling(), 0);
    ExactRefinement refinement = new ExactRefinement(dueBefore);
    refinement.start(0, 1);
    refinement.step(0, targets, 5, exactAt(1), 1);
    long version = 1;
    for (int u = 0; u < CacheBases.MAX_BASES + 1; u++) {
      targets.move(doubling(), version);
      version++;
      encode(100 + 2 * u, 102 + 2 * u, version); // a new base each time
    }
    assertTrue(bases.value().size() <= CacheBases.MAX_BASES + 1, "bases " + bases.value().size());
    encoded.clear();
    ExactRefinement.Step step;
    do {
      step = refinement.step(0, targets, 8, exactAt(version), version);
    } while (!step.finished());
    assertEquals(35, encoded.size(), "the 35 still due, rebased or not");
    assertEquals(35, new HashSet<>(encoded).size());
    assertEquals(40 + 2 * (CacheBases.MAX_BASES + 1), total(bases.value()));
    for (String id : encoded) {
      assertEquals(-1, map.get(id).encodedAt);
      assertEquals(version, map.get(id).version);
    }
  }

  /** A key restored with targets due under a setting that now says 0 finishes in one step. */
  @Test
  void aGroupSizeOfZeroReEncodesEveryDueTargetAtOnce() throws Exception {
    encode(0, 12, 0);
    targets.move(doubling(), 0);
    ExactRefinement refinement = new ExactRefinement(dueBefore);
    refinement.start(0, 1);
    ExactRefinement.Step step = refinement.step(0, targets, 0, exactAt(1), 1);
    assertTrue(step.finished());
    assertEquals(12, step.reencoded().size());
    assertFalse(refinement.pending());
  }
}
