package io.dynnibal.jobs.ingest;

import io.dynnibal.jobs.shard.ShardInput;
import io.dynnibal.stream.QueryBatch;
import java.time.Duration;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one way into the shards (parallelism 1, a single key): forwards target upserts and deletes as
 * they come, and fans each query batch out to every shard, but holds batches back until the targets
 * that were on the topic when the job started have gone ahead ({@link ShardInput#TARGETS_LOADED}
 * from {@link DecodeTargets}). Because targets and batches leave through the same channels, in
 * order, no shard answers a batch before it has indexed those targets: a dataset published in full
 * before the job starts (an experiment's replay) trains on every pair, none is dead-lettered as
 * "not indexed yet".
 *
 * <p>Held batches are released a few at a time, from timers, never all in one call, and only while
 * the output has room ({@link Operator}): an operator inside a call cannot forward a checkpoint
 * barrier, and Flink checks for room before it hands an operator a record but not before it fires a
 * timer. A release that waits for buffers sits in the call until the shards drain a buffer's worth
 * of batches, at the trainer's pace, and holds every checkpoint back meanwhile (and with it every
 * transactional commit, model updates and metrics included).
 *
 * <p>Targets published later are indexed whenever they arrive. If the marker never comes (a
 * transactional producer's commit marker can sit after the last record, one offset short of what
 * {@link DecodeTargets} waits for), held batches are released once {@code targets.first.max.wait}
 * has passed without a target going through, with a warning. The wait counts from the last target,
 * not from the first batch: shards that encode slowly (a transformer tower) hold the targets back
 * by backpressure for as long as indexing takes, and releasing the batches then would dead-letter
 * every pair whose target is still queued.
 */
public final class PairsAfterTargets
    extends KeyedCoProcessFunction<Integer, ShardInput, QueryBatch, ShardInput> {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(PairsAfterTargets.class);

  /** Held batches fanned out per timer firing: small, so a checkpoint barrier waits for little. */
  private static final int RELEASE_PER_TIMER = 2;

  private final String targetsTopic;
  private final Duration targetsFirstMaxWait;
  private final int[] shardKeys;
  private transient ValueState<Boolean> released;

  /** Batches waiting, by arrival number; {@code queue} = {next to release, next arrival number}. */
  private transient MapState<Long, QueryBatch> held;

  private transient ValueState<long[]> queue;

  /**
   * Whether the output has a free buffer: {@link Operator} asks the task's writer (after {@link
   * #open}); a function run by another operator (a test harness) assumes room.
   */
  private transient java.util.function.BooleanSupplier outputAvailable = () -> true;

  /** Delay before a release that found the output full looks again. */
  private static final long FULL_OUTPUT_RETRY_MS = 10;

  /** Processing time at which the last target went through, while batches are held. */
  private transient ValueState<Long> lastTarget;

  private final boolean nothingToWaitFor;

  /**
   * @param targetsAtStart end offsets of the targets topic when the job was built, per partition
   */
  public PairsAfterTargets(
      String targetsTopic,
      Duration targetsFirstMaxWait,
      int[] shardKeys,
      java.util.Map<Integer, Long> targetsAtStart) {
    this.targetsTopic = targetsTopic;
    this.targetsFirstMaxWait = targetsFirstMaxWait;
    this.shardKeys = shardKeys;
    this.nothingToWaitFor = targetsAtStart.values().stream().allMatch(end -> end == 0);
  }

  @Override
  public void open(OpenContext context) throws Exception {
    released = getRuntimeContext().getState(new ValueStateDescriptor<>("released", Types.BOOLEAN));
    held =
        getRuntimeContext()
            .getMapState(
                new MapStateDescriptor<>("held", Types.LONG, TypeInformation.of(QueryBatch.class)));
    queue =
        getRuntimeContext()
            .getState(
                new ValueStateDescriptor<>(
                    "queue",
                    org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo
                        .LONG_PRIMITIVE_ARRAY_TYPE_INFO));
    lastTarget = getRuntimeContext().getState(new ValueStateDescriptor<>("lastTarget", Types.LONG));
    if (outputAvailable == null) { // transient: null after the function is shipped to a task
      outputAvailable = () -> true;
    }
  }

  @Override
  public void processElement1(ShardInput target, Context ctx, Collector<ShardInput> out)
      throws Exception {
    if (target.kind == ShardInput.TARGETS_LOADED) {
      if (!isReleased()) {
        LOG.info("targets loaded: releasing {} held query batches", waiting());
        released.update(true);
        scheduleRelease(ctx.timerService());
      }
    } else {
      if (!isReleased()) {
        lastTarget.update(ctx.timerService().currentProcessingTime());
      }
      out.collect(target);
    }
  }

  @Override
  public void processElement2(QueryBatch batch, Context ctx, Collector<ShardInput> out)
      throws Exception {
    if (nothingToWaitFor && !isReleased()) {
      released.update(true);
    }
    if (isReleased() && waiting() == 0) {
      fanOut(batch, out);
      return;
    }
    if (!isReleased() && waiting() == 0) {
      LOG.info(
          "holding query batches until the targets on {} at start are loaded (or none comes for {})",
          targetsTopic,
          targetsFirstMaxWait);
      ctx.timerService()
          .registerProcessingTimeTimer(
              ctx.timerService().currentProcessingTime() + targetsFirstMaxWait.toMillis());
    }
    long[] q = queueState();
    held.put(q[1]++, batch);
    queue.update(q);
  }

  @Override
  public void onTimer(long timestamp, OnTimerContext ctx, Collector<ShardInput> out)
      throws Exception {
    if (!isReleased()) {
      Long last = lastTarget.value();
      if (last != null && last + targetsFirstMaxWait.toMillis() > timestamp) {
        // Targets are still going through: wait for the marker, or for them to stop.
        ctx.timerService().registerProcessingTimeTimer(last + targetsFirstMaxWait.toMillis());
        return;
      }
      LOG.warn(
          "the targets topic {} was not read to its start-time end, and no target came for {}: releasing the held batches"
              + " (pairs whose target is not indexed yet go to the dead-letter topic)",
          targetsTopic,
          targetsFirstMaxWait);
      released.update(true);
    }
    long[] q = queueState();
    for (int i = 0; i < RELEASE_PER_TIMER && q[0] < q[1] && outputAvailable.getAsBoolean(); i++) {
      fanOut(held.get(q[0]), out);
      held.remove(q[0]++);
    }
    queue.update(q);
    if (q[0] < q[1]) {
      org.apache.flink.streaming.api.TimerService timers = ctx.timerService();
      if (outputAvailable.getAsBoolean()) {
        scheduleRelease(timers);
      } else {
        timers.registerProcessingTimeTimer(timers.currentProcessingTime() + FULL_OUTPUT_RETRY_MS);
      }
    }
  }

  private void scheduleRelease(org.apache.flink.streaming.api.TimerService timers) {
    timers.registerProcessingTimeTimer(timers.currentProcessingTime() + 1);
  }

  /** How the function learns whether its output has room (always, unless told). */
  void whenOutputAvailable(java.util.function.BooleanSupplier available) {
    this.outputAvailable = available;
  }

  /**
   * The operator that runs {@link PairsAfterTargets}: a keyed co-process operator that lets the
   * function ask whether the task's output has a free buffer before it releases held batches from a
   * timer.
   */
  public static final class Operator
      extends org.apache.flink.streaming.api.operators.co.KeyedCoProcessOperator<
          Integer, ShardInput, QueryBatch, ShardInput> {
    private static final long serialVersionUID = 1L;

    public Operator(PairsAfterTargets function) {
      super(function);
    }

    @Override
    public void open() throws Exception {
      super.open();
      org.apache.flink.runtime.io.network.api.writer.ResultPartitionWriter writer =
          getContainingTask().getEnvironment().getWriter(0);
      ((PairsAfterTargets) getUserFunction()).whenOutputAvailable(writer::isAvailable);
    }
  }

  private boolean isReleased() throws Exception {
    return Boolean.TRUE.equals(released.value());
  }

  private long waiting() throws Exception {
    long[] q = queueState();
    return q[1] - q[0];
  }

  private long[] queueState() throws Exception {
    long[] q = queue.value();
    return q == null ? new long[2] : q;
  }

  private void fanOut(QueryBatch batch, Collector<ShardInput> out) {
    for (int key : shardKeys) {
      out.collect(ShardInput.queries(key, batch));
    }
  }
}
