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
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * them into one step's input, deterministically (replies in shard order, a seeded random per
 * batch):
 *
 * <ul>
 *   <li>hard negatives, {@code negatives.per.example} for each query from all shards' offers: in
 *       sample mode each pick takes the next draw of a shard chosen in proportion to its softmax
 *       mass for the query, so the picks follow the softmax over all targets (each shard drew from
 *       its own part of it); in top-k mode the best offers across shards (the paper's forest
 *       merge). The batch shares the union of every query's picks;
 *   <li>uniform negatives: shard s is drawn with probability size_s / total, then its next uniform
 *       draw is taken, so the merged draws are uniform over all targets;
 *   <li>positives: from the shard that holds each target (none: the target is unknown).
 * </ul>
 */
public final class NegativeMerge extends KeyedProcessFunction<Long, ShardReply, MergedBatch> {
  private static final long serialVersionUID = 1L;

  private final int shards;
  private final int perExample;
  private final boolean candidatesOnly;
  private final NegativesMode mode;
  private final int uniformNegatives;
  private final long seed;
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
    this.perExample = perExample;
    this.candidatesOnly = candidatesOnly;
    this.mode = mode;
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
    MergedBatch merged = merge(all, perExample, candidatesOnly, mode, uniformNegatives, seed);
    Long stored = storingNanos.remove(ctx.getCurrentKey());
    merged.mergeMillis = ((stored == null ? 0 : stored) + System.nanoTime() - start) / 1e6;
    out.collect(merged);
  }

  static MergedBatch merge(
      List<ShardReply> replies, int perExample, NegativesMode mode, int uniformCount, long seed) {
    return merge(replies, perExample, false, mode, uniformCount, seed);
  }

  static MergedBatch merge(
      List<ShardReply> replies,
      int perExample,
      boolean candidatesOnly,
      NegativesMode mode,
      int uniformCount,
      long seed) {
    replies.sort(Comparator.comparingInt(r -> r.shard));
    QueryBatch batch = replies.get(0).batch; // shard 0 carries it
    int n = batch.size();
    MergedBatch merged = new MergedBatch();
    merged.batch = batch;
    merged.positives = new TargetFeatures[n];
    for (int q = 0; q < n; q++) {
      merged.positives[q] = new TargetFeatures(); // id null: unknown unless a shard has it
    }
    // offers.get(q).get(s): shard s's offers to query q, in the order it drew them.
    List<List<List<TargetFeatures>>> offers = new ArrayList<>();
    for (int q = 0; q < n; q++) {
      List<List<TargetFeatures>> byShard = new ArrayList<>();
      for (int s = 0; s < replies.size(); s++) {
        byShard.add(new ArrayList<>());
      }
      offers.add(byShard);
    }
    merged.minModelVersion = Long.MAX_VALUE;
    merged.minModelStep = Long.MAX_VALUE;
    merged.shardMillis = new double[replies.size()];
    // The exact logit of each offer to a probe query (fidelity.probes), by offer.
    Map<TargetFeatures, Float> exactLogits = new IdentityHashMap<>();
    // The log probability of each offer under its shard's sampler for its query, and its shard.
    Map<TargetFeatures, Float> logProbabilities = new IdentityHashMap<>();
    Map<TargetFeatures, Integer> shardOf = new IdentityHashMap<>();
    for (int s = 0; s < replies.size(); s++) {
      ShardReply r = replies.get(s);
      for (int i = 0; i < r.positives.length; i++) {
        merged.positives[r.positiveQuery[i]] = r.positives[i];
      }
      for (int i = 0; i < r.sampled.length; i++) {
        offers.get(r.sampledQuery[i]).get(s).add(r.sampled[i]);
        if (r.sampledExactLogits != null) {
          exactLogits.put(r.sampled[i], r.sampledExactLogits[i]);
        }
        logProbabilities.put(
            r.sampled[i],
            r.sampledLogProbabilities == null ? Float.NaN : r.sampledLogProbabilities[i]);
        shardOf.put(r.sampled[i], s);
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
    SplittableRandom random = new SplittableRandom(seed ^ (batch.batchId * 0x9E3779B97F4A7C15L));
    List<List<TargetFeatures>> picks = new ArrayList<>();
    for (int q = 0; q < n; q++) {
      picks.add(
          mode == NegativesMode.TOP_K
              ? best(offers.get(q), perExample)
              : byMass(offers.get(q), logMass(replies, q), perExample, random));
    }
    measureFidelity(merged, replies, picks, exactLogits, perExample, mode);
    if (candidatesOnly) {
      List<TargetFeatures> candidates = new ArrayList<>();
      List<Integer> candidateQuery = new ArrayList<>();
      for (int q = 0; q < n; q++) {
        for (TargetFeatures t : picks.get(q)) {
          candidates.add(t);
          candidateQuery.add(q);
        }
      }
      merged.candidates = candidates.toArray(new TargetFeatures[0]);
      merged.candidateQuery = candidateQuery.stream().mapToInt(Integer::intValue).toArray();
      picks.clear(); // the trainer chooses among them: nothing shared yet
    }
    merged.sampled =
        SharedNegatives.union(picks, new HashSet<>(Arrays.asList(batch.targetIds)), t -> t.id)
            .toArray(new TargetFeatures[0]);
    Inclusions inclusions = inclusions(replies, picks, logProbabilities, shardOf, mode, perExample);
    merged.sampledInclusion = new float[merged.sampled.length];
    for (int i = 0; i < merged.sampled.length; i++) {
      merged.sampledInclusion[i] = (float) inclusions.of(merged.sampled[i].id);
    }
    merged.uniform =
        uniform(
            replies,
            uniformCount,
            new SplittableRandom(seed ^ (batch.batchId * 0xBF58476D1CE4E5B9L)));
    return merged;
  }

  /**
   * The fidelity figures of the probe queries' picks (the candidates, when the trainer re-scores),
   * averaged over the probes that have them; NaN when the shards measured none.
   */
  private static void measureFidelity(
      MergedBatch merged,
      List<ShardReply> replies,
      List<List<TargetFeatures>> picks,
      Map<TargetFeatures, Float> exactLogits,
      int perExample,
      NegativesMode mode) {
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
        logits[i] = exactLogits.getOrDefault(mine.get(i), Float.NaN);
      }
      mean.add(
          SoftmaxFidelity.measure(
              parts,
              mine.stream().map(t -> t.id).toList(),
              logits,
              perExample,
              mode,
              // What the picks' probabilities rest on: the shards' masses for the query together.
              totalLogMass(logMass(replies, q))));
    }
    SoftmaxFidelity.Figures f = mean.mean();
    merged.fidelityOverlapTopk = f.overlapTopk();
    merged.fidelityLogitRatio = f.logitRatio();
    merged.fidelityMassRatio = f.massRatio();
    merged.fidelityNormaliserError = f.normaliserError();
  }

  /**
   * How likely the batch's picks were to include each target: a query's pick from shard s is that
   * shard's draw with probability {@code mass_s / sum of masses}, and the shard's draw is the
   * target with the probability its sampler reported. Top-k picks are chosen, not drawn: certain.
   */
  private static Inclusions inclusions(
      List<ShardReply> replies,
      List<List<TargetFeatures>> picks,
      Map<TargetFeatures, Float> logProbabilities,
      Map<TargetFeatures, Integer> shardOf,
      NegativesMode mode,
      int perExample) {
    Inclusions inclusions = new Inclusions();
    for (int q = 0; q < picks.size(); q++) {
      double[] mass = shardMasses(logMass(replies, q));
      double total = 0;
      for (double m : mass) {
        total += m;
      }
      Set<String> seen = new HashSet<>();
      for (TargetFeatures t : picks.get(q)) {
        if (seen.add(t.id)) {
          double p =
              mode == NegativesMode.TOP_K
                  ? Double.NaN
                  : mass[shardOf.get(t)] / total * Math.exp(logProbabilities.get(t));
          inclusions.drawn(t.id, p, perExample);
        }
      }
    }
    return inclusions;
  }

  /** The {@code k} highest-logit distinct offers of all shards (ties by id). */
  static List<TargetFeatures> best(List<List<TargetFeatures>> byShard, int k) {
    Map<String, TargetFeatures> distinct = new HashMap<>();
    for (List<TargetFeatures> offers : byShard) {
      for (TargetFeatures t : offers) {
        distinct.putIfAbsent(t.id, t);
      }
    }
    return distinct.values().stream()
        .sorted(Comparator.comparingDouble((TargetFeatures t) -> -t.logit).thenComparing(t -> t.id))
        .limit(k)
        .toList();
  }

  /**
   * {@code k} picks, each the next draw of a shard chosen with probability proportional to its mass
   * among the shards with draws left. Shard s drew from the softmax over its own targets, so a pick
   * follows the softmax over all of them when the masses are right. A shard without a mass estimate
   * (NaN) counts as the mean of the others (or 1 when none has one).
   */
  static List<TargetFeatures> byMass(
      List<List<TargetFeatures>> byShard, double[] logMass, int k, SplittableRandom random) {
    int shards = byShard.size();
    double[] mass = shardMasses(logMass);
    int[] next = new int[shards];
    List<TargetFeatures> out = new ArrayList<>(k);
    while (out.size() < k) {
      double total = 0;
      for (int s = 0; s < shards; s++) {
        total += next[s] < byShard.get(s).size() ? mass[s] : 0;
      }
      if (!(total > 0)) {
        break; // every shard's draws are used up
      }
      double u = random.nextDouble() * total;
      int chosen = -1;
      for (int s = 0; s < shards && chosen < 0; s++) {
        double m = next[s] < byShard.get(s).size() ? mass[s] : 0;
        if (u < m) {
          chosen = s;
        }
        u -= m;
      }
      if (chosen < 0) { // rounding at the end of the range: the last shard with draws left
        for (int s = shards - 1; s >= 0 && chosen < 0; s--) {
          chosen = next[s] < byShard.get(s).size() ? s : -1;
        }
      }
      out.add(byShard.get(chosen).get(next[chosen]++));
    }
    return out;
  }

  /** Masses relative to the largest (so exp cannot overflow); NaN ones as described above. */
  private static double[] shardMasses(double[] logMass) {
    double max = largestKnown(logMass);
    double knownSum = 0;
    int known = 0;
    double[] mass = new double[logMass.length];
    for (int s = 0; s < logMass.length; s++) {
      if (!Double.isNaN(logMass[s])) {
        mass[s] = Math.exp(logMass[s] - max);
        knownSum += mass[s];
        known++;
      }
    }
    for (int s = 0; s < logMass.length; s++) {
      if (Double.isNaN(logMass[s])) {
        mass[s] = known == 0 ? 1 : knownSum / known;
      }
    }
    return mass;
  }

  /** The largest log mass that is not NaN; NaN when every one is. */
  private static double largestKnown(double[] logMass) {
    double max = Double.NaN;
    for (double l : logMass) {
      if (!Double.isNaN(l) && (Double.isNaN(max) || l > max)) {
        max = l;
      }
    }
    return max;
  }

  /**
   * The log of the shards' masses together; a shard without an estimate (NaN) counts as the mean of
   * the others, as in {@link #byMass}. NaN when no shard has one.
   */
  static double totalLogMass(double[] logMass) {
    double max = largestKnown(logMass);
    if (Double.isNaN(max) || max == Double.NEGATIVE_INFINITY) {
      return max;
    }
    double sum = 0;
    for (double m : shardMasses(logMass)) { // relative to the largest, as the picks weigh them
      sum += m;
    }
    return max + Math.log(sum);
  }

  private static double[] logMass(List<ShardReply> replies, int query) {
    double[] out = new double[replies.size()];
    for (int s = 0; s < replies.size(); s++) {
      double[] l = replies.get(s).logMass;
      out[s] = l == null || query >= l.length ? Double.NaN : l[query];
    }
    return out;
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
