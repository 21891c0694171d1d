package io.dynnibal.training.local;

import java.util.function.LongSupplier;

/**
 * How many steps a local run makes: at most a bound (its epochs and step limit) and, under a
 * wall-time budget, as many as the budget holds at the pace the steps have kept so far. The
 * estimate is renewed every {@link #REPLAN_EVERY} steps, so a run whose steps speed up (a cache
 * filling) or slow down is planned anew; it never exceeds the bound and never falls below the steps
 * already made. The clock starts when the budget is made.
 */
final class TimeBudget {
  /** Steps between two estimates of the steps the budget holds. */
  static final int REPLAN_EVERY = 20;

  private final long budgetNanos;
  private final int bound;
  private final LongSupplier clock;
  private final long start;
  private int steps;

  /**
   * @param minutes the wall time the steps may take (0: no budget, the bound alone decides)
   */
  TimeBudget(double minutes, int bound) {
    this(minutes, bound, System::nanoTime);
  }

  /** With {@code clock} giving nanoseconds. */
  TimeBudget(double minutes, int bound, LongSupplier clock) {
    this.budgetNanos = (long) (minutes * 60e9);
    this.bound = bound;
    this.steps = bound;
    this.clock = clock;
    this.start = clock.getAsLong();
  }

  boolean limited() {
    return budgetNanos > 0;
  }

  long seconds() {
    return budgetNanos / 1_000_000_000L;
  }

  /** The steps the run is planned to make, as of the last estimate. */
  int steps() {
    return steps;
  }

  /** Seconds since the budget was made. */
  double elapsed() {
    return Math.max(1e-9, (clock.getAsLong() - start) / 1e9);
  }

  /**
   * Renews the plan after {@code done} steps: at once when the budget is spent, otherwise every
   * {@link #REPLAN_EVERY} steps.
   *
   * @return whether the planned steps changed (the learning rate's decay should follow them)
   */
  boolean replan(int done) {
    if (!limited()) {
      return false;
    }
    long elapsed = clock.getAsLong() - start;
    int planned;
    if (elapsed >= budgetNanos) {
      planned = done;
    } else if (done % REPLAN_EVERY == 0) {
      double nanosPerStep = elapsed / (double) done;
      long more = (long) ((budgetNanos - elapsed) / nanosPerStep);
      planned = (int) Math.min(bound, done + more);
    } else {
      return false;
    }
    boolean changed = planned != steps;
    steps = planned;
    return changed;
  }
}
