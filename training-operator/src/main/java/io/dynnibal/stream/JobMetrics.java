package io.dynnibal.stream;

import java.util.List;

/**
 * The job's figures as Flink metrics: every name registered under the operator group {@value
 * #GROUP}, so a Prometheus reporter exposes them as {@code
 * flink_taskmanager_job_task_operator_dynnibal_<name>} (a Grafana dashboard over these names is in
 * {@code deploy/grafana/}). Names are stable: dashboards and alerts depend on them.
 */
public final class JobMetrics {
  public static final String GROUP = "dynnibal";

  // The trainer's.
  public static final String STEP = "step";
  public static final String LOSS = "loss";
  public static final String STEPS_PER_SECOND = "stepsPerSecond";
  public static final String CACHE_STALENESS_STEPS = "cacheStalenessSteps";
  public static final String MH_ACCEPTANCE_RATE = "mhAcceptanceRate";
  public static final String MODEL_VERSION = "modelVersion";
  public static final String REENCODE_CYCLES = "reencodeCycles";
  public static final String FEEDBACK_LATENCY_STEPS = "feedbackLatencySteps";
  public static final String FEEDBACK_LATENCY_MS = "feedbackLatencyMs";
  public static final String PAIRS_TRAINED = "pairsTrained";
  public static final String PAIRS_DEAD_LETTERED = "pairsDeadLettered";

  /** Pairs of batches that arrived after {@code max.steps}: neither trained nor dead-lettered. */
  public static final String PAIRS_AFTER_MAX_STEPS = "pairsAfterMaxSteps";

  /**
   * Model snapshots (versions for the shards, kept and final models) the trainer could not write
   * since it started, e.g. on a full disk: training goes on, the shards keep their version.
   */
  public static final String SNAPSHOT_WRITE_FAILURES = "snapshotWriteFailures";

  public static final String GRADIENT_NORM = "gradientNorm";
  public static final String STEPS_REFUSED = "stepsRefused";
  public static final String LOSS_SPIKES = "lossSpikes";

  // Each shard's.
  public static final String INDEX_TARGETS = "indexTargets";
  public static final String SAMPLING_MILLIS = "samplingMillis";
  public static final String MODEL_UPDATES_APPLIED = "modelUpdatesApplied";
  public static final String MODEL_UPDATES_IGNORED = "modelUpdatesIgnored";
  public static final String REPAIR_TARGETS_MOVED = "repairTargetsMoved";
  public static final String SAMPLING_GAVE_UP = "samplingGaveUp";

  /**
   * Time a shard subtask has spent building SG trees from its state since it started (after a start
   * or restore, and after each exact re-encode), in ms, cumulative: right after a restore, what its
   * first batch waited for.
   */
  public static final String INDEX_BUILD_MILLIS = "indexBuildMillis";

  /**
   * Trees a shard subtask rebuilt from the shapes saved with the checkpoint it was restored from
   * (the rest of its restored trees were built in bulk), since it started.
   */
  public static final String INDEX_TREES_FROM_SHAPE = "indexTreesFromShape";

  /**
   * Shard keys of a subtask whose last batch was mined by the exact softmax over their caches
   * ({@code exact-cache}, or {@code auto} below its bound); the subtask's other mining keys used
   * their tree.
   */
  public static final String SHARDS_MINED_EXACTLY = "shardsMinedExactly";

  /** Every name, trainer's first. */
  public static final List<String> ALL =
      List.of(
          STEP,
          LOSS,
          STEPS_PER_SECOND,
          CACHE_STALENESS_STEPS,
          MH_ACCEPTANCE_RATE,
          MODEL_VERSION,
          SNAPSHOT_WRITE_FAILURES,
          REENCODE_CYCLES,
          FEEDBACK_LATENCY_STEPS,
          FEEDBACK_LATENCY_MS,
          PAIRS_TRAINED,
          PAIRS_DEAD_LETTERED,
          PAIRS_AFTER_MAX_STEPS,
          INDEX_TARGETS,
          SAMPLING_MILLIS,
          MODEL_UPDATES_APPLIED,
          MODEL_UPDATES_IGNORED,
          REPAIR_TARGETS_MOVED,
          SAMPLING_GAVE_UP,
          INDEX_BUILD_MILLIS,
          INDEX_TREES_FROM_SHAPE,
          SHARDS_MINED_EXACTLY);

  /** The Prometheus name of one of {@link #ALL}. */
  public static String prometheusName(String name) {
    return "flink_taskmanager_job_task_operator_" + GROUP + "_" + name;
  }

  private JobMetrics() {}
}
