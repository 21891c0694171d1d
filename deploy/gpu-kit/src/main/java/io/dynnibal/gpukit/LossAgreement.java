package io.dynnibal.gpukit;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Whether two loss curves of the same steps, from the same seed, weights and batches, agree: the
 * first step's losses (one forward pass of the same model: only the order of floating-point sums
 * differs) within {@code firstTolerance} of each other, relatively, and the mean loss of every
 * window of {@code window} steps within {@code windowTolerance}. Training amplifies the first
 * step's rounding differences step after step, so later steps are compared as windows, not one by
 * one.
 */
record LossAgreement(double firstTolerance, double windowTolerance, int window) {

  static final LossAgreement DEFAULT = new LossAgreement(1e-3, 0.02, 50);

  Map<String, Object> compare(float[] reference, float[] other) {
    if (reference.length != other.length || reference.length == 0) {
      throw new IllegalArgumentException(
          "loss curves of " + reference.length + " and " + other.length + " steps");
    }
    double first = relative(reference[0], other[0]);
    double worstWindow = 0;
    double maxAbs = 0;
    for (int from = 0; from < reference.length; from += window) {
      int to = Math.min(reference.length, from + window);
      double a = 0;
      double b = 0;
      for (int s = from; s < to; s++) {
        a += reference[s];
        b += other[s];
        maxAbs = Math.max(maxAbs, Math.abs(reference[s] - other[s]));
      }
      worstWindow = Math.max(worstWindow, relative(a / (to - from), b / (to - from)));
    }
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("steps", reference.length);
    r.put("first_step_relative_difference", first);
    r.put("worst_window_relative_difference", worstWindow);
    r.put("window_steps", window);
    r.put("max_step_absolute_difference", maxAbs);
    r.put("tolerance_first_step", firstTolerance);
    r.put("tolerance_window", windowTolerance);
    r.put("agree", first <= firstTolerance && worstWindow <= windowTolerance);
    return r;
  }

  private static double relative(double a, double b) {
    return Math.abs(a - b) / Math.max(1e-12, Math.abs(a));
  }
}
