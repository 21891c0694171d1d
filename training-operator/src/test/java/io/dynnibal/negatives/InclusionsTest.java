package io.dynnibal.negatives;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class InclusionsTest {
  @Test
  void aTargetNoQueryDrewIsNotIncluded() {
    assertEquals(0, new Inclusions().of("x"));
  }

  @Test
  void kDrawsOfOneQueryIncludeATargetUnlessAllMissIt() {
    Inclusions inclusions = new Inclusions();
    inclusions.drawn("x", 0.1, 3);
    assertEquals(1 - Math.pow(0.9, 3), inclusions.of("x"), 1e-12);
  }

  @Test
  void theQueriesThatDrewATargetEachAddTheirChance() {
    Inclusions inclusions = new Inclusions();
    inclusions.drawn("x", 0.5, 1);
    inclusions.drawn("x", 0.2, 1);
    assertEquals(1 - 0.5 * 0.8, inclusions.of("x"), 1e-12);
  }

  @Test
  void aChosenTargetIsIncludedForCertain() {
    Inclusions inclusions = new Inclusions();
    inclusions.drawn("x", Double.NaN, 1);
    inclusions.drawn("y", 1.2, 1); // an estimate past 1 is clamped
    assertEquals(1, inclusions.of("x"));
    assertEquals(1, inclusions.of("y"));
  }
}
