package io.dynnibal.training;

/**
 * Linear warm-up from 0 to the peak over {@code warmupSteps}, then polynomial decay to {@code peak
 * * endFraction} at {@code totalSteps}, constant afterwards (the shape of the paper's App. D
 * schedule; BERT-style). With {@code totalSteps <= warmupSteps} there is no decay: the rate stays
 * at its peak, as a stream without a planned end wants.
 */
public record LearningRateSchedule(
    float peak, int warmupSteps, int totalSteps, float endFraction, float power) {

  public LearningRateSchedule {
    if (!(peak > 0) || Float.isInfinite(peak)) {
      throw new IllegalArgumentException(
          "learning rate must be a positive finite number, got " + peak);
    }
    if (warmupSteps < 0 || totalSteps < 0) {
      throw new IllegalArgumentException(
          "warm-up and total steps must be >= 0, got " + warmupSteps + ", " + totalSteps);
    }
    if (!(endFraction >= 0 && endFraction <= 1) || !(power > 0)) {
      throw new IllegalArgumentException(
          "need 0 <= endFraction <= 1 and power > 0, got " + endFraction + ", " + power);
    }
  }

  public static LearningRateSchedule constant(float rate) {
    return new LearningRateSchedule(rate, 0, 0, 1f, 1f);
  }

  /** The rate for the 1-based step. */
  public float rate(int step) {
    if (step <= warmupSteps) {
      return peak * step / Math.max(1, warmupSteps);
    }
    if (totalSteps <= warmupSteps) {
      return peak;
    }
    double progress = Math.min(1.0, (double) (step - warmupSteps) / (totalSteps - warmupSteps));
    double end = peak * (double) endFraction;
    return (float) ((peak - end) * Math.pow(1 - progress, power) + end);
  }

  public LearningRateSchedule scaledBy(float factor) {
    return new LearningRateSchedule(peak * factor, warmupSteps, totalSteps, endFraction, power);
  }
}
