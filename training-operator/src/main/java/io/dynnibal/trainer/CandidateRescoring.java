package io.dynnibal.trainer;

import io.dynnibal.index.VectorMath;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.negatives.SharedNegatives;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.MergedBatch;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The trainer's choice among the shards' candidates ({@code negatives.candidates.per.example}): the
 * shards scored queries with the model version they hold, tens of steps old, against cached
 * vectors; here each query and its candidates are scored with the current parameters, and the
 * query's {@code negatives.per.example} negatives are drawn from the softmax over its candidates
 * (Gumbel top-k: without repeats) or, in top-k mode, are its best. The batch shares their union.
 *
 * <p>The cost is one forward pass (no gradient) over the distinct candidates; what it buys is
 * negatives as hard as the current model finds them, the freshness the negative cache has.
 */
final class CandidateRescoring {
  private CandidateRescoring() {}

  static List<TargetFeatures> draw(
      DualEncoder encoder,
      MergedBatch merged,
      int perExample,
      NegativesMode mode,
      double sharpness,
      long seed) {
    Map<String, Integer> slotOf = new LinkedHashMap<>();
    List<Features> distinct = new ArrayList<>();
    for (TargetFeatures t : merged.candidates) {
      if (slotOf.putIfAbsent(t.id, distinct.size()) == null) {
        distinct.add(Features.of(t));
      }
    }
    int queries = merged.batch.size();
    List<List<Integer>> candidatesOf = new ArrayList<>();
    for (int q = 0; q < queries; q++) {
      candidatesOf.add(new ArrayList<>());
    }
    for (int i = 0; i < merged.candidates.length; i++) {
      candidatesOf.get(merged.candidateQuery[i]).add(i);
    }
    float[][] q = encoder.encodeQueryTexts(Arrays.asList(merged.batch.queryTexts));
    float[][] t = encoder.encodeTargets(distinct);
    double beta = mode.softmaxScale(encoder.config().scoreScale(), sharpness);
    SplittableRandom random =
        new SplittableRandom(seed * 0x632BE59BD9B4E019L + merged.batch.batchId);
    // A batch positive is already every query's candidate: never chosen, so it takes no slot.
    java.util.Set<String> positives = new HashSet<>(Arrays.asList(merged.batch.targetIds));
    List<List<TargetFeatures>> picks = new ArrayList<>();
    for (int query = 0; query < queries; query++) {
      List<Integer> own = candidatesOf.get(query);
      double[] key = new double[own.size()];
      for (int j = 0; j < own.size(); j++) {
        TargetFeatures c = merged.candidates[own.get(j)];
        double logit = beta * VectorMath.dot(q[query], t[slotOf.get(c.id)]);
        // Gumbel top-k: the k largest logit + Gumbel noise are k draws without repeats.
        key[j] = mode == NegativesMode.TOP_K ? logit : logit - Math.log(-Math.log(uniform(random)));
      }
      Integer[] order = new Integer[own.size()];
      for (int j = 0; j < order.length; j++) {
        order[j] = j;
      }
      Arrays.sort(order, (a, b) -> Double.compare(key[b], key[a]));
      List<TargetFeatures> chosen = new ArrayList<>();
      java.util.Set<String> seen = new HashSet<>();
      for (int j = 0; j < order.length && chosen.size() < perExample; j++) {
        TargetFeatures c = merged.candidates[own.get(order[j])];
        if (!positives.contains(c.id) && seen.add(c.id)) {
          chosen.add(c);
        }
      }
      picks.add(chosen);
    }
    return SharedNegatives.union(picks, positives, c -> c.id);
  }

  /** In (0, 1): the Gumbel transform needs neither end. */
  private static double uniform(SplittableRandom random) {
    double u;
    do {
      u = random.nextDouble();
    } while (u == 0);
    return u;
  }
}
