package io.dynnibal.bench.soak;

import io.dynnibal.schemas.TrainingMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.DoubleSupplier;

/**
 * The faults a soak injected, each with its recovery as the soak observes it: a fault's disruption
 * is its own time (the broker's kill), the failure Flink records after it (kills, pauses, the
 * drill), or the moment a full disk is freed; it has recovered once a step trained after the
 * disruption is committed, and for a full disk a newer model update with it. Bad records disrupt
 * nothing.
 */
final class FaultRecoveries {
  private final List<InjectedFault> faults = new ArrayList<>();
  private final DoubleSupplier seconds;
  private final Consumer<String> log;

  /**
   * @param seconds seconds into the soak, now
   * @param log where recoveries are reported
   */
  FaultRecoveries(DoubleSupplier seconds, Consumer<String> log) {
    this.seconds = seconds;
    this.log = log;
  }

  void add(InjectedFault fault) {
    faults.add(fault);
  }

  List<InjectedFault> all() {
    return List.copyOf(faults);
  }

  int size() {
    return faults.size();
  }

  /** Whether some fault still waits for the failure Flink records after it. */
  boolean awaitingFailure() {
    return faults.stream().anyMatch(FaultRecoveries::awaitsFailure);
  }

  /** Flink's latest recorded failure, when at or after a waiting fault, is its disruption. */
  void latestFailure(Optional<Long> epochMs) {
    for (int i = 0; i < faults.size(); i++) {
      InjectedFault f = faults.get(i);
      if (awaitsFailure(f) && epochMs.isPresent() && epochMs.get() >= f.atEpochMs()) {
        faults.set(i, f.failedAt(epochMs.get()));
      }
    }
  }

  /** A committed report: the faults it shows recovered. */
  void committed(TrainingMetrics m) {
    for (int i = 0; i < faults.size(); i++) {
      InjectedFault f = faults.get(i);
      if (f.recoveredBy(m)) {
        double after = seconds.getAsDouble() - f.atSeconds();
        faults.set(i, f.recovered(after));
        log.accept(
            String.format(
                "%s: training committed step %d (model version %d) again after %.1f s",
                f.fault(), m.getStep(), m.getModelVersion(), after));
      }
    }
  }

  /** The full disk was freed at {@code epochMs}, with the shards asked to hold {@code version}. */
  void diskFreed(long epochMs, long version) {
    for (int i = 0; i < faults.size(); i++) {
      InjectedFault f = faults.get(i);
      if (f.fault().equals(Fault.DISK_FULL.name()) && f.sinceEpochMs() == 0) {
        faults.set(i, f.freedAt(epochMs, version));
      }
    }
  }

  /** Whether every fault that disrupts training has recovered. */
  boolean allRecovered() {
    return faults.stream()
        .allMatch(f -> f.recoverySeconds() != null || f.fault().equals(Fault.BAD_RECORDS.name()));
  }

  /** A fault that disrupts training and is still unrecovered {@code limitSeconds} after it. */
  Optional<InjectedFault> unrecoveredAfter(double limitSeconds) {
    return faults.stream()
        .filter(f -> f.recoverySeconds() == null && !f.fault().equals(Fault.BAD_RECORDS.name()))
        .filter(f -> seconds.getAsDouble() - f.atSeconds() > limitSeconds)
        .findFirst();
  }

  private static boolean awaitsFailure(InjectedFault f) {
    return f.sinceEpochMs() == 0
        && f.recoverySeconds() == null
        && !f.fault().equals(Fault.DISK_FULL.name())
        && !f.fault().equals(Fault.BAD_RECORDS.name());
  }
}
