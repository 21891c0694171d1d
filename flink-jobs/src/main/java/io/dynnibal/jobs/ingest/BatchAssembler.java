package io.dynnibal.jobs.ingest;

import io.dynnibal.schemas.TrainingPair;
import io.dynnibal.stream.QueryBatch;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.formats.avro.typeutils.AvroTypeInfo;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Pairs -> batches of B, numbered 0, 1, 2, ... (runs with parallelism 1, so numbers are global).
 * The partial batch and the counter are operator state: a restore neither loses nor repeats a pair.
 */
public final class BatchAssembler extends ProcessFunction<TrainingPair, QueryBatch>
    implements CheckpointedFunction {
  private static final long serialVersionUID = 1L;

  private final int batchSize;
  private transient List<TrainingPair> pending;
  private transient long nextBatch;
  private transient ListState<TrainingPair> pendingState;
  private transient ListState<Long> nextBatchState;

  public BatchAssembler(int batchSize) {
    this.batchSize = batchSize;
  }

  @Override
  public void processElement(TrainingPair pair, Context ctx, Collector<QueryBatch> out) {
    pending.add(pair);
    if (pending.size() == batchSize) {
      QueryBatch batch = new QueryBatch();
      batch.batchId = nextBatch++;
      batch.pairIds = new String[batchSize];
      batch.queryTexts = new String[batchSize];
      batch.targetIds = new String[batchSize];
      for (int i = 0; i < batchSize; i++) {
        TrainingPair p = pending.get(i);
        batch.pairIds[i] = p.getPairId();
        batch.queryTexts[i] = p.getQueryText();
        batch.targetIds[i] = p.getTargetId();
      }
      pending.clear();
      out.collect(batch);
    }
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    pendingState.update(pending);
    nextBatchState.update(List.of(nextBatch));
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    pendingState =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>("pending-pairs", new AvroTypeInfo<>(TrainingPair.class)));
    nextBatchState =
        context
            .getOperatorStateStore()
            .getListState(new ListStateDescriptor<>("next-batch", Types.LONG));
    pending = new ArrayList<>();
    for (TrainingPair p : pendingState.get()) {
      pending.add(p);
    }
    nextBatch = 0;
    for (Long n : nextBatchState.get()) {
      nextBatch = Math.max(nextBatch, n);
    }
  }
}
