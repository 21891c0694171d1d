package io.dynnibal.jobs.training;

import io.dynnibal.jobs.kafka.TopicReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one way into the shards (parallelism 1, a single key): forwards target upserts and deletes as they come, and
 * fans each query batch out to every shard, but holds batches back until the targets that were on the topic when the
 * job started have gone ahead ({@link ShardInput#TARGETS_LOADED} from {@link DecodeTargets}). Because targets and
 * batches leave through the same channels, in order, no shard answers a batch before it has indexed those targets:
 * a dataset published in full before the job starts (an experiment's replay) trains on every pair, none is
 * dead-lettered as "not indexed yet".
 *
 * <p>Targets published later are indexed whenever they arrive. If the marker never comes (a transactional producer's
 * commit marker can sit after the last record, one offset short of what {@link DecodeTargets} waits for), held batches
 * are released after {@code targets.first.max.wait}, with a warning.
 */
final class PairsAfterTargets extends KeyedCoProcessFunction<Integer, ShardInput, QueryBatch, ShardInput> {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(PairsAfterTargets.class);

  private final TrainingJobConfig config;
  private final int[] shardKeys;
  private transient ValueState<Boolean> released;
  private transient ListState<QueryBatch> held;
  private transient boolean nothingToWaitFor;

  PairsAfterTargets(TrainingJobConfig config, int[] shardKeys) {
    this.config = config;
    this.shardKeys = shardKeys;
  }

  @Override
  public void open(OpenContext context) throws Exception {
    released = getRuntimeContext().getState(new ValueStateDescriptor<>("released", Types.BOOLEAN));
    held = getRuntimeContext().getListState(new ListStateDescriptor<>("held", TypeInformation.of(QueryBatch.class)));
    nothingToWaitFor = TopicReader.endOffsets(config.clientProperties(), config.targetsTopic()).values().stream()
        .allMatch(end -> end == 0);
  }

  @Override
  public void processElement1(ShardInput target, Context ctx, Collector<ShardInput> out) throws Exception {
    if (target.kind == ShardInput.TARGETS_LOADED) {
      release(out, "targets loaded");
    } else {
      out.collect(target);
    }
  }

  @Override
  public void processElement2(QueryBatch batch, Context ctx, Collector<ShardInput> out) throws Exception {
    if (Boolean.TRUE.equals(released.value()) || nothingToWaitFor) {
      released.update(true);
      fanOut(batch, out);
      return;
    }
    if (!held.get().iterator().hasNext()) {
      Duration wait = config.targetsFirstMaxWait;
      LOG.info("holding query batches until the targets on {} at start are loaded (at most {})",
          config.targetsTopic(), wait);
      ctx.timerService().registerProcessingTimeTimer(ctx.timerService().currentProcessingTime() + wait.toMillis());
    }
    held.add(batch);
  }

  @Override
  public void onTimer(long timestamp, OnTimerContext ctx, Collector<ShardInput> out) throws Exception {
    if (!Boolean.TRUE.equals(released.value())) {
      LOG.warn("the targets topic {} was not read to its start-time end within {}: releasing the held batches"
          + " (pairs whose target is not indexed yet go to the dead-letter topic)", config.targetsTopic(),
          config.targetsFirstMaxWait);
      release(out, "waited " + config.targetsFirstMaxWait);
    }
  }

  private void release(Collector<ShardInput> out, String why) throws Exception {
    if (Boolean.TRUE.equals(released.value())) {
      return; // a restarted decoder announces again
    }
    List<QueryBatch> batches = new ArrayList<>();
    held.get().forEach(batches::add);
    held.clear();
    released.update(true);
    LOG.info("{}: releasing {} held query batches", why, batches.size());
    for (QueryBatch batch : batches) {
      fanOut(batch, out);
    }
  }

  private void fanOut(QueryBatch batch, Collector<ShardInput> out) {
    for (int key : shardKeys) {
      out.collect(ShardInput.queries(key, batch));
    }
  }
}
