package io.dynnibal.jobs.merge;

import io.dynnibal.jobs.shard.ShardReply;
import java.util.List;

/**
 * The shards' softmax masses for one query ({@link ShardReply#logMass}): shard s reports {@code log
 * sum exp(logit)} over its own targets, so the masses of all shards together are the softmax
 * normaliser over every target. A shard without an estimate (NaN) counts as the mean of the others,
 * or 1 when none has one.
 */
final class ShardMasses {
  private ShardMasses() {}

  /** Each shard's log mass for query {@code query}, in reply order (NaN where unknown). */
  static double[] logMass(List<ShardReply> replies, int query) {
    double[] out = new double[replies.size()];
    for (int s = 0; s < replies.size(); s++) {
      double[] l = replies.get(s).logMass;
      out[s] = l == null || query >= l.length ? Double.NaN : l[query];
    }
    return out;
  }

  /** Masses relative to the largest (so exp cannot overflow); NaN ones as described above. */
  static double[] relative(double[] logMass) {
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

  /** The log of the shards' masses together, NaN ones as described above; NaN when all are. */
  static double totalLogMass(double[] logMass) {
    double max = largestKnown(logMass);
    if (Double.isNaN(max) || max == Double.NEGATIVE_INFINITY) {
      return max;
    }
    double sum = 0;
    for (double m : relative(logMass)) { // relative to the largest, as the picks weigh them
      sum += m;
    }
    return max + Math.log(sum);
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
}
