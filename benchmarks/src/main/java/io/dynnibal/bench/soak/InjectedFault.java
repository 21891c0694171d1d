package io.dynnibal.bench.soak;

/**
 * One injected fault: when (seconds into the soak and wall-clock), the last committed step then,
 * and its recovery: how long until a step trained after the disruption was committed (a report's
 * {@code time_ms} says when it was trained; every process shares this machine's clock). For a fault
 * that fails the job the disruption is the failure Flink records (steps the old tasks trained from
 * their buffers until then, and committed, do not count); for the broker it is the kill.
 *
 * @param sinceEpochMs the disruption's time; 0 while Flink has not recorded the failure yet
 */
public record InjectedFault(
    String fault,
    double atSeconds,
    long atEpochMs,
    long sinceEpochMs,
    long stepAtFault,
    Double recoverySeconds) {
  InjectedFault recovered(double seconds) {
    return new InjectedFault(fault, atSeconds, atEpochMs, sinceEpochMs, stepAtFault, seconds);
  }

  InjectedFault failedAt(long epochMs) {
    return new InjectedFault(fault, atSeconds, atEpochMs, epochMs, stepAtFault, recoverySeconds);
  }
}
