package io.dynnibal.bench.soak;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The soak's audit: every published training pair against the committed steps ({@code lost}:
 * published, never trained; {@code duplicated}: trained more than once; {@code
 * trainedNotPublished}: trained, never published), and the faults with their recoveries.
 */
public record SoakReport(
    long pairsPublished,
    long pairsTrained,
    long pairsDeadLettered,
    long badRecordsPublished,
    long lost,
    long duplicated,
    long trainedNotPublished,
    int faultsInjected,
    long restores,
    double maxRecoverySeconds,
    long steps,
    double seconds,
    List<InjectedFault> faults) {
  public Map<String, Object> figures() {
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("pairs_published", pairsPublished);
    f.put("pairs_trained", pairsTrained);
    f.put("pairs_dead_lettered", pairsDeadLettered);
    f.put("bad_records_published", badRecordsPublished);
    f.put("lost", lost);
    f.put("duplicated", duplicated);
    f.put("trained_not_published", trainedNotPublished);
    f.put("faults_injected", faultsInjected);
    f.put("restores", restores);
    f.put("max_recovery_seconds", Math.round(maxRecoverySeconds * 10) / 10.0);
    f.put("steps", steps);
    f.put("seconds", Math.round(seconds));
    List<Map<String, Object>> each = new ArrayList<>();
    for (InjectedFault i : faults) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("fault", i.fault());
      m.put("at_seconds", Math.round(i.atSeconds()));
      m.put("step", i.stepAtFault());
      m.put("model_version", i.modelVersion());
      m.put(
          "recovery_seconds",
          i.recoverySeconds() == null ? null : Math.round(i.recoverySeconds() * 10) / 10.0);
      each.add(m);
    }
    f.put("faults", each);
    return f;
  }
}
