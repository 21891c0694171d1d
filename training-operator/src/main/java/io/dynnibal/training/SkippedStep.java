package io.dynnibal.training;

/**
 * A training step refused because its loss or gradient is not finite. The trainer's parameters and
 * optimiser state are exactly as before the step; the message says why, for a dead-letter record.
 */
public final class SkippedStep extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public SkippedStep(String reason) {
    super(reason);
  }
}
