package io.dynnibal.jobs.merge;

import io.dynnibal.jobs.shard.ShardReply;
import io.dynnibal.negatives.SharedNegatives;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.MergedBatch;
import io.dynnibal.stream.QueryBatch;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
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
 * Waits for every shard's reply to a batch (keyed by batch id, replies in keyed state) and merges
 * them into one step's input, deterministically (replies in shard order):
 *
 * <ul>
 *   <li>hard negatives: per query, the candidates of all shards ranked by logit (the paper's forest
 *       merge: the trees are sampled independently, the highest unnormalised probabilities win);
 *       the batch's shared set takes each query's best not yet taken, round-robin over queries, so
 *       every query contributes its hardest negatives;
 *   <li>uniform negatives: shard s is drawn with probability size_s / total, then its next uniform
 *       draw is taken, so the merged draws are uniform over all targets;
 *   <li>positives: from the shard that holds each target (none: the target is unknown).
 * </ul>
 */
public final class NegativeMerge extends KeyedProcessFunction<Long, ShardReply, MergedBatch> {
  private static final long serialVersionUID = 1L;

  private final int shards;
  private final int hardNegatives;
  private final int uniformNegatives;
  private final long seed;
  private transient ListState<ShardReply> replies;
  private transient ValueState<Integer> received;

  /**
   * @param hardNegatives the batch's shared hard negatives (at most)
   * @param uniformNegatives the batch's uniform negatives
   */
  public NegativeMerge(int shards, int hardNegatives, int uniformNegatives, long seed) {
    this.shards = shards;
    this.hardNegatives = hardNegatives;
    this.uniformNegatives = uniformNegatives;
    this.seed = seed;
  }

  @Override
  public void open(OpenContext context) {
    replies =
        getRuntimeContext()
            .getListState(
                new ListStateDescriptor<>("replies", TypeInformation.of(ShardReply.class)));
    received = getRuntimeContext().getState(new ValueStateDescriptor<>("received", Types.INT));
  }

  @Override
  public void processElement(ShardReply reply, Context ctx, Collector<MergedBatch> out)
      throws Exception {
    int count = received.value() == null ? 1 : received.value() + 1;
    if (count < shards) {
      // Replies are large (features of every candidate): append and count, read them back only
      // once, when complete.
      replies.add(reply);
      received.update(count);
      return;
    }
    List<ShardReply> all = new ArrayList<>(List.of(reply));
    for (ShardReply r : replies.get()) {
      all.add(r);
    }
    replies.clear();
    received.clear();
    out.collect(merge(all, hardNegatives, uniformNegatives, seed));
  }

  static MergedBatch merge(
      List<ShardReply> replies, int sampledCount, int uniformCount, long seed) {
    replies.sort(Comparator.comparingInt(r -> r.shard));
    QueryBatch batch = replies.get(0).batch; // shard 0 carries it
    int n = batch.size();
    MergedBatch merged = new MergedBatch();
    merged.batch = batch;
    merged.positives = new TargetFeatures[n];
    for (int q = 0; q < n; q++) {
      merged.positives[q] = new TargetFeatures(); // id null: unknown unless a shard has it
    }
    List<List<TargetFeatures>> perQuery = new ArrayList<>();
    for (int q = 0; q < n; q++) {
      perQuery.add(new ArrayList<>());
    }
    merged.minModelVersion = Long.MAX_VALUE;
    merged.minModelStep = Long.MAX_VALUE;
    merged.shardMillis = new double[replies.size()];
    for (ShardReply r : replies) {
      for (int i = 0; i < r.positives.length; i++) {
        merged.positives[r.positiveQuery[i]] = r.positives[i];
      }
      for (int i = 0; i < r.sampled.length; i++) {
        perQuery.get(r.sampledQuery[i]).add(r.sampled[i]);
      }
      merged.minModelVersion = Math.min(merged.minModelVersion, r.modelVersion);
      merged.minModelStep = Math.min(merged.minModelStep, r.modelStep);
      merged.indexTargets += r.shardSize;
      merged.shardMillis[r.shard] = r.samplingMillis;
      merged.proposals += r.proposals;
      merged.updatesIgnored += r.updatesIgnored;
      merged.accepted += r.accepted;
      merged.miningFloats += r.miningFloats;
    }
    for (List<TargetFeatures> candidates : perQuery) {
      candidates.sort(
          Comparator.comparingDouble((TargetFeatures t) -> -t.logit).thenComparing(t -> t.id));
    }
    merged.sampled =
        SharedNegatives.roundRobin(perQuery, sampledCount, t -> t.id)
            .toArray(new TargetFeatures[0]);
    merged.uniform =
        uniform(
            replies,
            uniformCount,
            new SplittableRandom(seed ^ (batch.batchId * 0xBF58476D1CE4E5B9L)));
    return merged;
  }

  private static TargetFeatures[] uniform(
      List<ShardReply> replies, int count, SplittableRandom random) {
    long total = 0;
    for (ShardReply r : replies) {
      total += r.shardSize;
    }
    List<TargetFeatures> out = new ArrayList<>(count);
    int[] used = new int[replies.size()];
    for (int i = 0; i < count && total > 0; i++) {
      long pick = random.nextLong(total);
      int s = 0;
      while (pick >= replies.get(s).shardSize) {
        pick -= replies.get(s).shardSize;
        s++;
      }
      ShardReply r = replies.get(s);
      if (used[s] < r.uniform.length) {
        out.add(r.uniform[used[s]++]);
      }
    }
    return out.toArray(new TargetFeatures[0]);
  }
}
