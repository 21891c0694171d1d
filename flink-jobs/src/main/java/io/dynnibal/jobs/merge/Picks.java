package io.dynnibal.jobs.merge;

import io.dynnibal.jobs.shard.ShardReply;
import io.dynnibal.negatives.Inclusions;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.state.TargetFeatures;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * How a query's hard negatives are picked from every shard's offers, and how likely the picks were
 * to include each target. In top-k mode the best offers across shards (the paper's forest merge);
 * in sample mode each pick takes the next draw of a shard chosen in proportion to its softmax mass
 * for the query ({@link ShardMasses}), so the picks follow the softmax over all targets (each shard
 * drew from its own part of it).
 */
final class Picks {
  private Picks() {}

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
   * among the shards with draws left; fewer when every shard's draws are used up. Shard s drew from
   * the softmax over its own targets, so a pick follows the softmax over all of them when the
   * masses are right.
   */
  static List<TargetFeatures> byMass(
      List<List<TargetFeatures>> byShard, double[] logMass, int k, SplittableRandom random) {
    double[] mass = ShardMasses.relative(logMass);
    int[] next = new int[byShard.size()];
    List<TargetFeatures> out = new ArrayList<>(k);
    while (out.size() < k) {
      int chosen = chooseShard(byShard, mass, next, random);
      if (chosen < 0) {
        break;
      }
      out.add(byShard.get(chosen).get(next[chosen]++));
    }
    return out;
  }

  /**
   * A shard with draws left, with probability proportional to its mass; -1 when none has any.
   *
   * @param next per shard, how many of its draws are taken
   */
  private static int chooseShard(
      List<List<TargetFeatures>> byShard, double[] mass, int[] next, SplittableRandom random) {
    int shards = byShard.size();
    double total = 0;
    for (int s = 0; s < shards; s++) {
      total += next[s] < byShard.get(s).size() ? mass[s] : 0;
    }
    if (!(total > 0)) {
      return -1;
    }
    double u = random.nextDouble() * total;
    for (int s = 0; s < shards; s++) {
      double m = next[s] < byShard.get(s).size() ? mass[s] : 0;
      if (u < m) {
        return s;
      }
      u -= m;
    }
    // Rounding at the end of the range: the last shard with draws left.
    for (int s = shards - 1; s >= 0; s--) {
      if (next[s] < byShard.get(s).size()) {
        return s;
      }
    }
    return -1;
  }

  /**
   * How likely the batch's picks were to include each target: a query's pick from shard s is that
   * shard's draw with probability {@code mass_s / sum of masses}, and the shard's draw is the
   * target with the probability its sampler reported. Top-k picks are chosen, not drawn: certain.
   */
  static Inclusions inclusions(
      List<ShardReply> replies,
      List<List<TargetFeatures>> picks,
      Offers offers,
      NegativesMode mode,
      int perExample) {
    Inclusions inclusions = new Inclusions();
    for (int q = 0; q < picks.size(); q++) {
      double[] mass = ShardMasses.relative(ShardMasses.logMass(replies, q));
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
                  : mass[offers.shardOf(t)] / total * Math.exp(offers.logProbability(t));
          inclusions.drawn(t.id, p, perExample);
        }
      }
    }
    return inclusions;
  }
}
