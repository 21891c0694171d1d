package io.dynnibal.bench.soak;

/**
 * One injected fault: when (seconds into the soak and wall-clock), the last committed step then,
 * and its recovery: how long until a step trained after the disruption was committed (a report's
 * {@code time_ms} says when it was trained; every process shares this machine's clock). For a fault
 * that fails the job the disruption is the failure Flink records (steps the old tasks trained from
 * their buffers until then, and committed, do not count); for the broker it is the kill.
 *
 * @param sinceEpochMs the disruption's time; 0 while Flink has not recorded the failure yet (for a
 *     full disk: while it is not freed yet, and it has recovered once a model update newer than
 *     {@code modelVersion} is committed after that)
 * @param modelVersion the model version the shards were asked to hold when the disruption ended (a
 *     full disk's), else at the fault
 */
public record InjectedFault(
    String fault,
    double atSeconds,
    long atEpochMs,
    long sinceEpochMs,
    long stepAtFault,
    long modelVersion,
    Double recoverySeconds) {
  InjectedFault recovered(double seconds) {
    return new InjectedFault(
        fault, atSeconds, atEpochMs, sinceEpochMs, stepAtFault, modelVersion, seconds);
  }

  InjectedFault failedAt(long epochMs) {
    return new InjectedFault(
        fault, atSeconds, atEpochMs, epochMs, stepAtFault, modelVersion, recoverySeconds);
  }

  /** A full disk freed at {@code epochMs}, with the shards at {@code version}. */
  InjectedFault freedAt(long epochMs, long version) {
    return new InjectedFault(
        fault, atSeconds, atEpochMs, epochMs, stepAtFault, version, recoverySeconds);
  }

  /** Whether {@code m}, a committed report, shows training recovered from this fault. */
  boolean recoveredBy(io.dynnibal.schemas.TrainingMetrics m) {
    return recoverySeconds == null
        && !fault.equals(Fault.BAD_RECORDS.name())
        && sinceEpochMs > 0
        && m.getTimeMs() > sinceEpochMs
        && (!fault.equals(Fault.DISK_FULL.name()) || m.getModelVersion() > modelVersion);
  }
}
