package io.dynnibal.jobs.merge;

import io.dynnibal.jobs.shard.ShardReply;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.stream.MergedBatch;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Waits for every shard's reply to a batch (keyed by batch id, replies in keyed state) and emits
 * their merge ({@link BatchMerger}) once the last is in. Invariant: a batch's key holds the replies
 * received so far and their count until the batch is complete, nothing after.
 */
public final class NegativeMerge extends KeyedProcessFunction<Long, ShardReply, MergedBatch> {
  private static final long serialVersionUID = 1L;

  private final int shards;
  private final BatchMerger merger;
  private transient ListState<ShardReply> replies;
  private transient ValueState<Integer> received;

  /**
   * Per batch still waiting for replies, the time spent storing the ones in so far: a diagnostic
   * ({@link MergedBatch#mergeMillis}), kept out of state, so a batch that spans a restore reports
   * only the time since.
   */
  private transient Map<Long, Long> storingNanos;

  /**
   * @param perExample hard negatives (or candidates) per query (0: none)
   * @param candidatesOnly pass each query's picks on as its candidates for the trainer to re-score
   *     instead of sharing them
   * @param uniformNegatives the batch's uniform negatives
   */
  public NegativeMerge(
      int shards,
      int perExample,
      boolean candidatesOnly,
      NegativesMode mode,
      int uniformNegatives,
      long seed) {
    this.shards = shards;
    this.merger = new BatchMerger(perExample, candidatesOnly, mode, uniformNegatives, seed);
  }

  @Override
  public void open(OpenContext context) {
    replies =
        getRuntimeContext()
            .getListState(
                new ListStateDescriptor<>("replies", TypeInformation.of(ShardReply.class)));
    received = getRuntimeContext().getState(new ValueStateDescriptor<>("received", Types.INT));
    storingNanos = new HashMap<>();
  }

  @Override
  public void processElement(ShardReply reply, Context ctx, Collector<MergedBatch> out)
      throws Exception {
    long start = System.nanoTime();
    int count = received.value() == null ? 1 : received.value() + 1;
    if (count < shards) {
      // Replies are large (features of every candidate): append and count, read them back only
      // once, when complete.
      replies.add(reply);
      received.update(count);
      storingNanos.merge(ctx.getCurrentKey(), System.nanoTime() - start, Long::sum);
      return;
    }
    List<ShardReply> all = new ArrayList<>(List.of(reply));
    for (ShardReply r : replies.get()) {
      all.add(r);
    }
    replies.clear();
    received.clear();
    MergedBatch merged = merger.merge(all);
    Long stored = storingNanos.remove(ctx.getCurrentKey());
    merged.mergeMillis = ((stored == null ? 0 : stored) + System.nanoTime() - start) / 1e6;
    out.collect(merged);
  }
}
