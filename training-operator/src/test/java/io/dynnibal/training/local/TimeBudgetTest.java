package io.dynnibal.training.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class TimeBudgetTest {
  private static final long SECOND = 1_000_000_000L;

  @Test
  void withoutABudgetTheBoundDecides() {
    AtomicLong now = new AtomicLong();
    TimeBudget budget = new TimeBudget(0, 500, now::get);
    now.addAndGet(3_600 * SECOND);
    assertFalse(budget.replan(TimeBudget.REPLAN_EVERY));
    assertEquals(500, budget.steps());
  }

  @Test
  void theStepsFollowThePaceSoFar() {
    AtomicLong now = new AtomicLong(7 * SECOND);
    TimeBudget budget = new TimeBudget(1, 10_000, now::get); // 60 s
    now.addAndGet(TimeBudget.REPLAN_EVERY * SECOND / 2); // 20 steps in 10 s
    assertTrue(budget.replan(TimeBudget.REPLAN_EVERY));
    assertEquals(120, budget.steps());
    now.addAndGet(TimeBudget.REPLAN_EVERY * SECOND / 10); // 40 steps in 12 s: faster now
    assertTrue(budget.replan(2 * TimeBudget.REPLAN_EVERY));
    assertEquals(40 + (int) (48 / 0.3), budget.steps());
  }

  @Test
  void betweenEstimatesThePlanStands() {
    AtomicLong now = new AtomicLong();
    TimeBudget budget = new TimeBudget(1, 10_000, now::get);
    now.addAndGet(5 * SECOND);
    assertFalse(budget.replan(TimeBudget.REPLAN_EVERY - 1));
    assertEquals(10_000, budget.steps());
  }

  @Test
  void neverPastTheBound() {
    AtomicLong now = new AtomicLong();
    TimeBudget budget = new TimeBudget(60, 100, now::get);
    now.addAndGet(SECOND);
    budget.replan(TimeBudget.REPLAN_EVERY);
    assertEquals(100, budget.steps());
  }

  @Test
  void aSpentBudgetStopsAtTheStepsMade() {
    AtomicLong now = new AtomicLong();
    TimeBudget budget = new TimeBudget(0.5, 10_000, now::get);
    now.addAndGet(31 * SECOND);
    assertTrue(budget.replan(7));
    assertEquals(7, budget.steps());
  }
}
