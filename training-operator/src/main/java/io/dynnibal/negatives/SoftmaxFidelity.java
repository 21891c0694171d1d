package io.dynnibal.negatives;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * How close a query's hard negatives come to what exact mining would have chosen: the softmax over
 * every target at the encoder's full dimension, {@code p_i = exp(l_i) / Z} with {@code l_i = beta *
 * score_i}, the query's positive left out. The targets live in shards, so each shard summarises its
 * own part ({@link Part}) and {@link #measure} combines the parts.
 *
 * <p>Three figures, each against exact mining in the same mode with the same number of picks k:
 *
 * <ul>
 *   <li>{@code overlap_topk}: the share of the exact top-k that the picks contain;
 *   <li>{@code logit_ratio}: the picks' mean exact logit over exact mining's: the top-k's mean in
 *       top-k mode, the softmax's expected logit {@code sum p_i l_i} per draw in sample mode;
 *   <li>{@code mass_ratio}: the softmax mass of the distinct picks over exact mining's: the top-k's
 *       mass, or in sample mode the expected mass of k independent draws' distinct targets, {@code
 *       sum p_i (1 - (1 - p_i)^k)}.
 * </ul>
 *
 * And one figure of the sampler's bookkeeping rather than its picks: {@code normaliser_error}, the
 * shards' estimate of {@code log Z} (what each draw's reported probability, and so the loss's
 * sampling correction, rests on) less the exact one, in nats; negative when the estimate is low
 * (the probabilities then read too high).
 *
 * <p>The expected mass is exact over the targets the parts list and first-order in the rest: a tail
 * target contributes {@code k p_i^2}, and the parts carry {@code sum p_i^2} for that.
 */
public final class SoftmaxFidelity {
  private SoftmaxFidelity() {}

  /**
   * One shard's exact summary of a query's softmax over its targets (positive excluded): its best
   * targets with their logits, best first, and three log-sums over all its targets. A POJO, so it
   * travels in a shard's reply.
   */
  public static final class Part {
    public String[] topIds = new String[0];
    public float[] topLogits = new float[0];

    /** {@code log sum exp(l_i)}; negative infinity for a shard without targets. */
    public double logMass = Double.NEGATIVE_INFINITY;

    /** {@code sum exp(l_i) l_i / sum exp(l_i)}: the shard's own softmax-weighted mean logit. */
    public double meanLogit;

    /** {@code log sum exp(2 l_i)}. */
    public double logSquareMass = Double.NEGATIVE_INFINITY;

    public Part() {}

    /**
     * The summary of a shard whose targets {@code ids[i]} have logits {@code logits[i]}, leaving
     * out index {@code excluded} (the query's positive, or -1), keeping the {@code top} best.
     */
    public static Part of(List<String> ids, float[] logits, int excluded, int top) {
      Part part = new Part();
      double max = Double.NEGATIVE_INFINITY;
      for (int i = 0; i < logits.length; i++) {
        if (i != excluded) {
          max = Math.max(max, logits[i]);
        }
      }
      if (max == Double.NEGATIVE_INFINITY) {
        return part;
      }
      double mass = 0;
      double weighted = 0;
      double square = 0;
      // The top {@code top} by a bounded min-heap (worst kept on top): a probe scores every target
      // of its shard, and sorting them all was most of the probe's cost.
      Comparator<Integer> worstFirst = // a NaN logit ranks last, as in a sort by logit
          Comparator.comparingDouble(
                  (Integer i) -> Float.isNaN(logits[i]) ? Double.NEGATIVE_INFINITY : logits[i])
              .thenComparing(Comparator.reverseOrder());
      PriorityQueue<Integer> best = new PriorityQueue<>(Math.max(1, top + 1), worstFirst);
      for (int i = 0; i < logits.length; i++) {
        if (i == excluded) {
          continue;
        }
        double w = Math.exp(logits[i] - max);
        mass += w;
        weighted += w * logits[i];
        square += w * w;
        if (best.size() < top) {
          best.add(i);
        } else if (top > 0 && worstFirst.compare(i, best.peek()) > 0) {
          best.poll();
          best.add(i);
        }
      }
      part.logMass = max + Math.log(mass);
      part.meanLogit = weighted / mass;
      part.logSquareMass = 2 * max + Math.log(square);
      int keep = best.size();
      part.topIds = new String[keep];
      part.topLogits = new float[keep];
      for (int r = keep - 1; r >= 0; r--) { // the heap yields the worst first: best first here
        int i = best.poll();
        part.topIds[r] = ids.get(i);
        part.topLogits[r] = logits[i];
      }
      return part;
    }
  }

  /** The figures' names in metrics and reports, in {@link Figures}' order. */
  public static final List<String> NAMES =
      List.of("overlap_topk", "logit_ratio", "mass_ratio", "normaliser_error");

  /**
   * The figures of one query (NaN where undefined, e.g. a non-positive exact logit, or no estimate
   * of the normaliser to judge).
   */
  public record Figures(
      double overlapTopk, double logitRatio, double massRatio, double normaliserError) {
    public static final Figures NONE = new Figures(Double.NaN, Double.NaN, Double.NaN);

    /** The picks' figures alone (no estimate of the normaliser to judge). */
    public Figures(double overlapTopk, double logitRatio, double massRatio) {
      this(overlapTopk, logitRatio, massRatio, Double.NaN);
    }

    double[] values() {
      return new double[] {overlapTopk, logitRatio, massRatio, normaliserError};
    }

    /** The defined figures by name ({@link #NAMES}). */
    public Map<String, Double> asMap() {
      Map<String, Double> out = new LinkedHashMap<>();
      double[] v = values();
      for (int i = 0; i < v.length; i++) {
        if (!Double.isNaN(v[i])) {
          out.put(NAMES.get(i), v[i]);
        }
      }
      return out;
    }
  }

  /** Each figure's mean over the measurements that define it (NaN ones left out). */
  public static final class Mean {
    private final double[] sums = new double[NAMES.size()];
    private final long[] counts = new long[NAMES.size()];

    public void add(Figures f) {
      double[] v = f.values();
      for (int i = 0; i < v.length; i++) {
        if (!Double.isNaN(v[i])) {
          sums[i] += v[i];
          counts[i]++;
        }
      }
    }

    /** The means; NaN for a figure never defined. */
    public Figures mean() {
      double[] m = new double[sums.length];
      for (int i = 0; i < m.length; i++) {
        m[i] = counts[i] == 0 ? Double.NaN : sums[i] / counts[i];
      }
      return new Figures(m[0], m[1], m[2], m[3]);
    }
  }

  /**
   * The figures of one query's picks.
   *
   * @param parts every shard's summary for the query
   * @param pickIds the query's picks, in order, repeats allowed
   * @param pickLogits their exact logits (NaN: unknown, e.g. a target that joined since the exact
   *     vectors were encoded; left out)
   * @param k picks exact mining would make
   */
  public static Figures measure(
      List<Part> parts, List<String> pickIds, float[] pickLogits, int k, NegativesMode mode) {
    return measure(parts, pickIds, pickLogits, k, mode, Double.NaN);
  }

  /**
   * As {@link #measure(List, List, float[], int, NegativesMode)}, with the shards' estimate of the
   * query's {@code log Z} (NaN: none) for {@code normaliser_error}.
   */
  public static Figures measure(
      List<Part> parts,
      List<String> pickIds,
      float[] pickLogits,
      int k,
      NegativesMode mode,
      double estimatedLogMass) {
    double logMass = Double.NEGATIVE_INFINITY;
    for (Part p : parts) {
      logMass = logAdd(logMass, p.logMass);
    }
    double logZ = logMass;
    if (logZ == Double.NEGATIVE_INFINITY || k <= 0) {
      return Figures.NONE;
    }
    record Scored(String id, float logit) {}
    List<Scored> listed = new ArrayList<>();
    for (Part p : parts) {
      for (int r = 0; r < p.topIds.length; r++) {
        listed.add(new Scored(p.topIds[r], p.topLogits[r]));
      }
    }
    listed.sort(Comparator.comparingDouble((Scored s) -> -s.logit).thenComparing(Scored::id));
    List<Scored> topK = listed.subList(0, Math.min(k, listed.size()));

    double pickSum = 0;
    int picked = 0;
    double pickMass = 0;
    Set<String> distinct = new HashSet<>();
    for (int i = 0; i < pickIds.size(); i++) {
      if (Float.isNaN(pickLogits[i])) {
        continue;
      }
      pickSum += pickLogits[i];
      picked++;
      if (distinct.add(pickIds.get(i))) {
        pickMass += Math.exp(pickLogits[i] - logZ);
      }
    }
    if (picked == 0 || topK.isEmpty()) {
      return Figures.NONE;
    }
    int overlap = 0;
    for (Scored s : topK) {
      overlap += distinct.contains(s.id) ? 1 : 0;
    }
    double exactLogit;
    double exactMass;
    if (mode == NegativesMode.TOP_K) {
      exactLogit = topK.stream().mapToDouble(Scored::logit).average().orElseThrow();
      exactMass = topK.stream().mapToDouble(s -> Math.exp(s.logit - logZ)).sum();
    } else {
      exactLogit = 0;
      double squares = 0;
      for (Part p : parts) {
        if (p.logMass > Double.NEGATIVE_INFINITY) {
          exactLogit += Math.exp(p.logMass - logZ) * p.meanLogit;
          squares += Math.exp(p.logSquareMass - 2 * logZ);
        }
      }
      exactMass = 0;
      Set<String> seen = new HashSet<>();
      for (Scored s : listed) {
        if (seen.add(s.id)) {
          double p = Math.exp(s.logit - logZ);
          exactMass += p * -Math.expm1(k * Math.log1p(-Math.min(p, 1)));
          squares -= p * p;
        }
      }
      exactMass += k * Math.max(0, squares);
    }
    double meanPick = pickSum / picked;
    return new Figures(
        overlap / (double) topK.size(),
        exactLogit > 0 ? meanPick / exactLogit : Double.NaN,
        exactMass > 0 ? pickMass / exactMass : Double.NaN,
        estimatedLogMass - logZ);
  }

  private static double logAdd(double a, double b) {
    if (a == Double.NEGATIVE_INFINITY) {
      return b;
    }
    if (b == Double.NEGATIVE_INFINITY) {
      return a;
    }
    double max = Math.max(a, b);
    return max + Math.log(Math.exp(a - max) + Math.exp(b - max));
  }
}
