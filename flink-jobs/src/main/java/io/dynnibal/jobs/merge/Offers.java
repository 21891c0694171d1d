package io.dynnibal.jobs.merge;

import io.dynnibal.jobs.shard.ShardReply;
import io.dynnibal.state.TargetFeatures;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The hard negatives every shard offered a batch's queries, by query and shard in the order each
 * shard drew them, and what its shard said of each offer: the log probability of the draw under the
 * shard's sampler and, for a probe query, its exact logit. Offers are told apart by identity: two
 * shards never offer the same object.
 */
final class Offers {
  /** {@code byQuery.get(q).get(s)}: the offers of the s-th reply to query q. */
  private final List<List<List<TargetFeatures>>> byQuery = new ArrayList<>();

  private final Map<TargetFeatures, Float> exactLogits = new IdentityHashMap<>();
  private final Map<TargetFeatures, Float> logProbabilities = new IdentityHashMap<>();
  private final Map<TargetFeatures, Integer> shardOf = new IdentityHashMap<>();

  /** The offers of {@code replies} (in shard order) to a batch of {@code queries}. */
  Offers(List<ShardReply> replies, int queries) {
    for (int q = 0; q < queries; q++) {
      List<List<TargetFeatures>> byShard = new ArrayList<>();
      for (int s = 0; s < replies.size(); s++) {
        byShard.add(new ArrayList<>());
      }
      byQuery.add(byShard);
    }
    for (int s = 0; s < replies.size(); s++) {
      add(s, replies.get(s));
    }
  }

  private void add(int s, ShardReply r) {
    for (int i = 0; i < r.sampled.length; i++) {
      byQuery.get(r.sampledQuery[i]).get(s).add(r.sampled[i]);
      if (r.sampledExactLogits != null) {
        exactLogits.put(r.sampled[i], r.sampledExactLogits[i]);
      }
      logProbabilities.put(
          r.sampled[i],
          r.sampledLogProbabilities == null ? Float.NaN : r.sampledLogProbabilities[i]);
      shardOf.put(r.sampled[i], s);
    }
  }

  /** The offers to query {@code query}, by shard (reply order). */
  List<List<TargetFeatures>> to(int query) {
    return byQuery.get(query);
  }

  /** The offer's exact logit for its probe query; NaN when it was not measured. */
  float exactLogit(TargetFeatures offer) {
    return exactLogits.getOrDefault(offer, Float.NaN);
  }

  /** The log probability of the offer's draw under its shard's sampler (NaN: unknown). */
  float logProbability(TargetFeatures offer) {
    return logProbabilities.get(offer);
  }

  /** The position of the offer's shard among the replies. */
  int shardOf(TargetFeatures offer) {
    return shardOf.get(offer);
  }
}
