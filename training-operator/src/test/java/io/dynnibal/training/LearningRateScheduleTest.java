package io.dynnibal.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LearningRateScheduleTest {
  @Test
  void warmsUpLinearlyThenDecaysPolynomiallyToTheEnd() {
    LearningRateSchedule s = new LearningRateSchedule(1e-3f, 10, 110, 0.1f, 1f);
    assertEquals(1e-4f, s.rate(1), 1e-9);
    assertEquals(5e-4f, s.rate(5), 1e-9);
    assertEquals(1e-3f, s.rate(10), 1e-9);
    assertEquals(0.55e-3f, s.rate(60), 1e-8); // halfway down from 1e-3 to 1e-4
    assertEquals(1e-4f, s.rate(110), 1e-9);
    assertEquals(1e-4f, s.rate(10_000), 1e-9); // constant after the end
    for (int step = 11; step < 110; step++) {
      assertTrue(s.rate(step + 1) <= s.rate(step));
    }
  }

  @Test
  void withoutAPlannedEndTheRateStaysAtItsPeak() {
    LearningRateSchedule s = new LearningRateSchedule(2e-3f, 100, 0, 0.05f, 1f);
    assertEquals(2e-3f, s.rate(100), 1e-9);
    assertEquals(2e-3f, s.rate(1_000_000), 1e-9);
  }

  @Test
  void badSettingsAreRefused() {
    assertThrows(
        IllegalArgumentException.class, () -> new LearningRateSchedule(0f, 1, 1, 0.1f, 1f));
    assertThrows(
        IllegalArgumentException.class, () -> new LearningRateSchedule(Float.NaN, 1, 1, 0.1f, 1f));
    assertThrows(
        IllegalArgumentException.class, () -> new LearningRateSchedule(1f, -1, 1, 0.1f, 1f));
    assertThrows(
        IllegalArgumentException.class, () -> new LearningRateSchedule(1f, 1, 1, 1.5f, 1f));
  }
}
