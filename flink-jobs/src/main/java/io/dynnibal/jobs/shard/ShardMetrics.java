package io.dynnibal.jobs.shard;

import io.dynnibal.stream.JobMetrics;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;

/**
 * The shard operator's metrics of one subtask ({@link JobMetrics}). Gauges are read by the metric
 * reporter's thread, hence atomic or volatile; everything else runs in the task's thread.
 *
 * <p>Invariant: {@code indexTargets} is the sum of the sizes of the subtask's heap indexes; every
 * change of an index's size (insert, delete, a tree built or dropped) goes through {@link
 * #indexed}.
 */
final class ShardMetrics {
  private final AtomicLong indexedTargets = new AtomicLong();
  private volatile double lastSamplingMillis;
  private volatile double indexBuildMillis;
  private volatile int treesFromShape;
  private final Set<Integer> minedExactly = ConcurrentHashMap.newKeySet();

  final Counter updatesApplied;
  final Counter duplicateUpdates;
  final Counter targetsRepaired;
  final Counter samplingGaveUp;

  /** The batch this subtask answered last (-1: none yet), for the logs of model updates. */
  private long lastBatchAnswered = -1;

  ShardMetrics(MetricGroup operator) {
    MetricGroup metrics = operator.addGroup(JobMetrics.GROUP);
    metrics.gauge(JobMetrics.INDEX_TARGETS, indexedTargets::get);
    metrics.gauge(JobMetrics.SAMPLING_MILLIS, () -> lastSamplingMillis);
    metrics.gauge(JobMetrics.INDEX_BUILD_MILLIS, () -> indexBuildMillis);
    metrics.gauge(JobMetrics.INDEX_TREES_FROM_SHAPE, () -> treesFromShape);
    metrics.gauge(JobMetrics.SHARDS_MINED_EXACTLY, minedExactly::size);
    updatesApplied = metrics.counter(JobMetrics.MODEL_UPDATES_APPLIED);
    duplicateUpdates = metrics.counter(JobMetrics.MODEL_UPDATES_IGNORED);
    targetsRepaired = metrics.counter(JobMetrics.REPAIR_TARGETS_MOVED);
    samplingGaveUp = metrics.counter(JobMetrics.SAMPLING_GAVE_UP);
  }

  /** {@code delta} targets joined (positive) or left (negative) one of the subtask's indexes. */
  void indexed(long delta) {
    indexedTargets.addAndGet(delta);
  }

  /**
   * Shard {@code key} mined its last batch exactly (the softmax over its caches) or by its tree.
   */
  void mined(int key, boolean exactly) {
    if (exactly) {
      minedExactly.add(key);
    } else {
      minedExactly.remove(key);
    }
  }

  /** A key's tree was rebuilt from its checkpointed shape. */
  void treeFromShape() {
    treesFromShape++;
  }

  /** A key's tree of at least one target was rebuilt from the state, in {@code millis}. */
  void treeBuilt(double millis) {
    indexBuildMillis += millis;
  }

  /** Batch {@code batchId} was answered, its sampling took {@code millis}. */
  void answered(long batchId, double millis) {
    lastSamplingMillis = millis;
    lastBatchAnswered = batchId;
  }

  long lastBatchAnswered() {
    return lastBatchAnswered;
  }
}
