package io.dynnibal.trainer;

import java.io.Serializable;

/**
 * A hook the trainer calls before each step, for reliability tests: throwing from it fails the
 * task, and Flink's recovery takes over. Production jobs use {@link #NONE}.
 */
@FunctionalInterface
public interface FaultInjection extends Serializable {
  FaultInjection NONE = step -> {};

  /** Called with the step about to be trained. */
  void beforeStep(long step);
}
