package io.dynnibal.trainer;

import java.io.Serializable;

/**
 * Hooks the trainer calls before each step and after each model update, for reliability tests:
 * throwing from it fails the task, and Flink's recovery takes over. Production jobs use {@link
 * #NONE}.
 */
@FunctionalInterface
public interface FaultInjection extends Serializable {
  FaultInjection NONE = step -> {};

  /** Called with the step about to be trained. */
  void beforeStep(long step);

  /** Called right after model update {@code version} left the trainer. */
  default void afterModelUpdate(long version) {}
}
