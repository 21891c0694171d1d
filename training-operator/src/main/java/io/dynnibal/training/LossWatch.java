package io.dynnibal.training;

/**
 * Watches the training loss for the two ways a run goes wrong: a <em>spike</em> (one step's loss
 * far above the recent trend: a bad batch or a bad update) and <em>divergence</em> (the trend
 * itself rises and stays up: the parameters were pushed somewhere they do not recover from).
 *
 * <p>The trend is an exponential moving average of the loss over about {@code 1 / ALPHA} steps. A
 * step is a spike when its loss exceeds {@code SPIKE_RATIO} times the trend and the trend by {@code
 * SPIKE_MARGIN} (the margin keeps a tiny trend from calling ordinary noise a spike). The run has
 * diverged once the trend rises above {@code DIVERGED_RATIO} times its lowest value and {@code
 * DIVERGED_MARGIN} above it, the lowest taken after {@code SETTLE_STEPS} (the first steps' trend is
 * dominated by the random start). The margin matters late in a run: a memorised second epoch takes
 * the loss to 0.02-0.03, and harder negatives after a re-encode cycle lift it to 0.08 - a factor of
 * three, and no divergence (the diverged demo runs went from 0.5 to 1-2.6). Diverged is sticky: a
 * run that blew up and came back down is still reported.
 *
 * <p>Invariant: {@code lowest} is +infinity until {@code steps > SETTLE_STEPS}.
 */
public final class LossWatch {
  static final double ALPHA = 0.05;
  static final double SPIKE_RATIO = 2;
  static final double SPIKE_MARGIN = 0.1;
  static final double DIVERGED_RATIO = 2;
  static final double DIVERGED_MARGIN = 0.5;
  static final int SETTLE_STEPS = 100;

  private long steps;
  private double trend = Double.NaN;
  private double lowest = Double.POSITIVE_INFINITY;
  private long spikes;
  private boolean diverged;

  /**
   * Adds one step's loss (finite).
   *
   * @return whether this step was a spike
   */
  public boolean observe(double loss) {
    steps++;
    boolean spike =
        !Double.isNaN(trend) && loss > SPIKE_RATIO * trend && loss > trend + SPIKE_MARGIN;
    trend = Double.isNaN(trend) ? loss : trend + ALPHA * (loss - trend);
    if (spike) {
      spikes++;
    }
    if (steps > SETTLE_STEPS) {
      lowest = Math.min(lowest, trend);
      if (trend > DIVERGED_RATIO * lowest && trend > lowest + DIVERGED_MARGIN) {
        diverged = true;
      }
    }
    return spike;
  }

  /** The smoothed loss (NaN before the first step). */
  public double trend() {
    return trend;
  }

  public long spikes() {
    return spikes;
  }

  public boolean diverged() {
    return diverged;
  }

  /** The state to checkpoint: steps, trend, lowest, spikes, diverged (0/1). */
  public double[] save() {
    return new double[] {steps, trend, lowest, spikes, diverged ? 1 : 0};
  }

  /** Restores what {@link #save} returned; null (a checkpoint from before) starts afresh. */
  public void restore(double[] saved) {
    if (saved == null) {
      return;
    }
    if (saved.length != 5) {
      throw new IllegalArgumentException("loss watch state of " + saved.length + " values");
    }
    steps = (long) saved[0];
    trend = saved[1];
    lowest = saved[2];
    spikes = (long) saved[3];
    diverged = saved[4] != 0;
  }
}
