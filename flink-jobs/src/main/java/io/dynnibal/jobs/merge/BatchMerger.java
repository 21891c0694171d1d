package io.dynnibal.jobs.merge;

import io.dynnibal.jobs.shard.ShardReply;
import io.dynnibal.negatives.Inclusions;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.negatives.SharedNegatives;
import io.dynnibal.negatives.SoftmaxFidelity;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.MergedBatch;
import io.dynnibal.stream.QueryBatch;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Merges every shard's reply to a batch into one step's input, deterministically (replies in shard
 * order, a seeded random per batch):
 *
 * <ul>
 *   <li>hard negatives, {@code negatives.per.example} for each query from all shards' offers
 *       ({@link Picks}); the batch shares the union of every query's picks, each with the chance
 *       that the batch's draws included it;
 *   <li>uniform negatives: shard s is drawn with probability size_s / total, then its next uniform
 *       draw is taken, so the merged draws are uniform over all targets;
 *   <li>positives: from the shard that holds each target (none: the target is unknown);
 *   <li>the fidelity of the probe queries' picks, from the shards' exact parts.
 * </ul>
 *
 * @param perExample hard negatives (or candidates) per query (0: none)
 * @param candidatesOnly pass each query's picks on as its candidates for the trainer to re-score
 *     instead of sharing them
 * @param uniformCount the batch's uniform negatives
 */
record BatchMerger(
    int perExample, boolean candidatesOnly, NegativesMode mode, int uniformCount, long seed)
    implements java.io.Serializable {

  /** The merge of {@code replies}, one from every shard (sorted here by shard). */
  MergedBatch merge(List<ShardReply> replies) {
    replies.sort(Comparator.comparingInt(r -> r.shard));
    QueryBatch batch = replies.get(0).batch; // shard 0 carries it
    MergedBatch merged = withTotals(batch, replies);
    Offers offers = new Offers(replies, batch.size());
    SplittableRandom random = new SplittableRandom(seed ^ (batch.batchId * 0x9E3779B97F4A7C15L));
    List<List<TargetFeatures>> picks = new ArrayList<>();
    for (int q = 0; q < batch.size(); q++) {
      picks.add(
          mode == NegativesMode.TOP_K
              ? Picks.best(offers.to(q), perExample)
              : Picks.byMass(offers.to(q), ShardMasses.logMass(replies, q), perExample, random));
    }
    measureFidelity(merged, replies, picks, offers);
    if (candidatesOnly) {
      passOnAsCandidates(merged, picks);
      picks.clear(); // the trainer chooses among them: nothing shared yet
    }
    share(merged, replies, picks, offers);
    merged.uniform =
        uniform(
            replies,
            uniformCount,
            new SplittableRandom(seed ^ (batch.batchId * 0xBF58476D1CE4E5B9L)));
    return merged;
  }

  /** The batch with its positives and the shards' versions, sizes and counts. */
  private static MergedBatch withTotals(QueryBatch batch, List<ShardReply> replies) {
    MergedBatch merged = new MergedBatch();
    merged.batch = batch;
    merged.positives = new TargetFeatures[batch.size()];
    for (int q = 0; q < batch.size(); q++) {
      merged.positives[q] = new TargetFeatures(); // id null: unknown unless a shard has it
    }
    merged.minModelVersion = Long.MAX_VALUE;
    merged.minModelStep = Long.MAX_VALUE;
    merged.shardMillis = new double[replies.size()];
    for (ShardReply r : replies) {
      for (int i = 0; i < r.positives.length; i++) {
        merged.positives[r.positiveQuery[i]] = r.positives[i];
      }
      merged.minModelVersion = Math.min(merged.minModelVersion, r.modelVersion);
      merged.minModelStep = Math.min(merged.minModelStep, r.modelStep);
      merged.indexTargets += r.shardSize;
      merged.storedTargets += r.storedTargets;
      merged.shardMillis[r.shard] = r.samplingMillis;
      merged.proposals += r.proposals;
      merged.updatesIgnored += r.updatesIgnored;
      merged.accepted += r.accepted;
      merged.miningFloats += r.miningFloats;
    }
    return merged;
  }

  private static void passOnAsCandidates(MergedBatch merged, List<List<TargetFeatures>> picks) {
    List<TargetFeatures> candidates = new ArrayList<>();
    List<Integer> candidateQuery = new ArrayList<>();
    for (int q = 0; q < picks.size(); q++) {
      for (TargetFeatures t : picks.get(q)) {
        candidates.add(t);
        candidateQuery.add(q);
      }
    }
    merged.candidates = candidates.toArray(new TargetFeatures[0]);
    merged.candidateQuery = candidateQuery.stream().mapToInt(Integer::intValue).toArray();
  }

  /** The union of the picks, none a batch positive, with each one's inclusion probability. */
  private void share(
      MergedBatch merged,
      List<ShardReply> replies,
      List<List<TargetFeatures>> picks,
      Offers offers) {
    merged.sampled =
        SharedNegatives.union(
                picks, new HashSet<>(Arrays.asList(merged.batch.targetIds)), t -> t.id)
            .toArray(new TargetFeatures[0]);
    Inclusions inclusions = Picks.inclusions(replies, picks, offers, mode, perExample);
    merged.sampledInclusion = new float[merged.sampled.length];
    for (int i = 0; i < merged.sampled.length; i++) {
      merged.sampledInclusion[i] = (float) inclusions.of(merged.sampled[i].id);
    }
  }

  /**
   * The fidelity figures of the probe queries' picks (the candidates, when the trainer re-scores),
   * averaged over the probes that have them; NaN when the shards measured none.
   */
  private void measureFidelity(
      MergedBatch merged,
      List<ShardReply> replies,
      List<List<TargetFeatures>> picks,
      Offers offers) {
    int probes = Integer.MAX_VALUE;
    for (ShardReply r : replies) {
      probes = Math.min(probes, r.probes == null ? 0 : r.probes.length);
    }
    SoftmaxFidelity.Mean mean = new SoftmaxFidelity.Mean();
    for (int q = 0; q < probes; q++) {
      List<SoftmaxFidelity.Part> parts = new ArrayList<>();
      for (ShardReply r : replies) {
        parts.add(r.probes[q]);
      }
      List<TargetFeatures> mine = picks.get(q);
      float[] logits = new float[mine.size()];
      for (int i = 0; i < logits.length; i++) {
        logits[i] = offers.exactLogit(mine.get(i));
      }
      mean.add(
          SoftmaxFidelity.measure(
              parts,
              mine.stream().map(t -> t.id).toList(),
              logits,
              perExample,
              mode,
              // What the picks' probabilities rest on: the shards' masses for the query together.
              ShardMasses.totalLogMass(ShardMasses.logMass(replies, q))));
    }
    SoftmaxFidelity.Figures f = mean.mean();
    merged.fidelityOverlapTopk = f.overlapTopk();
    merged.fidelityLogitRatio = f.logitRatio();
    merged.fidelityMassRatio = f.massRatio();
    merged.fidelityNormaliserError = f.normaliserError();
  }

  /** {@code count} draws, each from shard s with probability size_s / total. */
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
