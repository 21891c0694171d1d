package io.dynnibal.bench.training;

import io.dynnibal.bench.Stages;
import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.index.VectorMath;
import io.dynnibal.index.nystrom.NystromProjector;
import io.dynnibal.index.sampling.FindClustering;
import io.dynnibal.index.sampling.MetropolisHastingsSampler;
import io.dynnibal.index.sampling.Samples;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.negatives.SoftmaxFidelity;
import io.dynnibal.state.ShardIndex;
import io.dynnibal.training.ProgressBar;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * How faithful DyNNIBAL's sampler is on a trained model, apart from training: every target encoded
 * once by the model, cached as exact Nyström vectors (landmarks drawn from the targets), one SG
 * tree over them; for each query, {@code k} MH draws per (chain length, cluster budget) setting and
 * their {@link SoftmaxFidelity} against exact sampling at full dimension. Two references bracket
 * the sampler: exact sampling from the softmax over the Nyström vectors (what the cache alone
 * loses) and exact sampling at full dimension (1 by construction, up to noise).
 *
 * <p>Training mixes this error with the cache's staleness and the map's approximation; here the
 * cache is exact, so what is left is the projection and the sampler.
 */
public final class SamplerFidelityBenchmark {
  private SamplerFidelityBenchmark() {}

  /**
   * @param chains MH proposals per chain to compare
   * @param clusterBudgets FindClustering budgets ({@code mh.max.clusters}) to compare
   */
  public record Options(
      DualEncoder model,
      List<TargetText> targets,
      List<LabelledQuery> queries,
      int queryCount,
      int landmarks,
      double treeBase,
      int perExample,
      List<Integer> chains,
      List<Integer> clusterBudgets,
      List<Double> deepestRadii,
      List<Integer> exactInside,
      int exactTargets,
      long seed) {}

  /** FindClustering's gamma as the shards' MH uses it (TreeMiner): only the budget binds. */
  private static final double GAMMA = 1e6;

  public static Map<String, Object> run(Options o) {
    return run(o, null);
  }

  /** As {@link #run(Options)}, showing each stage and the queries on {@code progress}. */
  public static Map<String, Object> run(Options o, PrintStream progress) {
    DualEncoder model = o.model();
    Stages stages = new Stages(progress, "sampler-fidelity", 3);
    stages.next(String.format("featurizing and encoding %,d targets", o.targets().size()));
    float beta = model.config().scoreScale();
    List<String> ids = new ArrayList<>(o.targets().size());
    Map<String, Integer> position = new HashMap<>();
    List<Features> features = new ArrayList<>(o.targets().size());
    for (TargetText t : o.targets()) {
      position.put(t.targetId(), ids.size());
      ids.add(t.targetId());
      features.add(model.featurizeTarget(t.text()));
    }
    long start = System.nanoTime();
    float[][] encoded = new float[ids.size()][];
    for (int from = 0; from < ids.size(); from += 512) {
      List<Features> part = features.subList(from, Math.min(ids.size(), from + 512));
      float[][] e = model.encodeTargets(part);
      System.arraycopy(e, 0, encoded, from, e.length);
    }
    double encodeSeconds = (System.nanoTime() - start) / 1e9;
    SplittableRandom random = new SplittableRandom(o.seed());
    float[][] landmarkEncodings = new float[o.landmarks()][];
    for (int i = 0; i < o.landmarks(); i++) {
      landmarkEncodings[i] = encoded[random.nextInt(encoded.length)];
    }
    NystromProjector projector = NystromProjector.fit(landmarkEncodings, 1e-6);
    List<float[]> caches = new ArrayList<>(ids.size());
    for (float[] e : encoded) {
      caches.add(projector.project(e));
    }
    stages.next("the Nystrom cache's SG tree");
    start = System.nanoTime();
    ShardIndex index = ShardIndex.build(o.landmarks(), o.treeBase(), ids, caches, o.seed());
    double buildSeconds = (System.nanoTime() - start) / 1e9;

    List<LabelledQuery> queries = new ArrayList<>();
    for (LabelledQuery q : o.queries()) {
      if (position.containsKey(q.targetId())) {
        queries.add(q);
      }
    }
    java.util.Collections.shuffle(queries, new java.util.Random(o.seed()));
    queries = queries.subList(0, Math.min(o.queryCount(), queries.size()));

    Map<String, Accumulator> results = new LinkedHashMap<>();
    results.put("exact full dimension", new Accumulator());
    results.put("exact over the Nystrom cache", new Accumulator());
    for (double radius : o.deepestRadii()) {
      for (int clusters : o.clusterBudgets()) {
        for (int chain : o.chains()) {
          for (int inside : o.exactInside()) {
            results.put(name(chain, clusters, radius, inside, o), new Accumulator());
          }
        }
      }
    }
    int k = o.perExample();
    float[] exact = new float[ids.size()];
    float[] cached = new float[ids.size()];
    ProgressBar bar = stages.bar("queries", queries.size());
    int measured = 0;
    for (LabelledQuery query : queries) {
      bar.draw(measured++, "");
      float[] q = model.encodeQueries(List.of(model.featurizeQuery(query.text())))[0];
      float[] z = projector.project(q);
      int positive = position.get(query.targetId());
      for (int i = 0; i < ids.size(); i++) {
        exact[i] = beta * (float) VectorMath.dot(q, encoded[i]);
        cached[i] = beta * (float) VectorMath.dot(z, caches.get(i));
      }
      List<SoftmaxFidelity.Part> parts =
          List.of(SoftmaxFidelity.Part.of(ids, exact, positive, Math.max(16, 4 * k)));
      results
          .get("exact full dimension")
          .add(parts, draws(exact, positive, k, random), exact, ids, k, 0);
      results
          .get("exact over the Nystrom cache")
          .add(parts, draws(cached, positive, k, random), exact, ids, k, 0);
      for (double radius : o.deepestRadii()) {
        for (int clusters : o.clusterBudgets()) {
          for (int chain : o.chains()) {
            for (int inside : o.exactInside()) {
              MetropolisHastingsSampler sampler =
                  new MetropolisHastingsSampler(
                      MetropolisHastingsSampler.Options.sampling(
                          new FindClustering.Options(beta, GAMMA, radius, clusters),
                          chain,
                          inside,
                          o.exactTargets()));
              long t0 = System.nanoTime();
              Samples s = index.sample(sampler, z, k, random);
              double ms = (System.nanoTime() - t0) / 1e6;
              int[] picks = new int[s.size()];
              int n = 0;
              for (int i = 0; i < s.size(); i++) {
                int at = position.get(index.idOf(s.targets()[i]));
                if (at != positive) {
                  picks[n++] = at;
                }
              }
              results
                  .get(name(chain, clusters, radius, inside, o))
                  .add(parts, Arrays.copyOf(picks, n), exact, ids, k, ms);
            }
          }
        }
      }
    }
    bar.finish(measured, "");
    Map<String, Object> figures = new LinkedHashMap<>();
    figures.put("targets", ids.size());
    figures.put("queries", queries.size());
    figures.put("landmarks", o.landmarks());
    figures.put("per_example", k);
    figures.put("beta", beta);
    figures.put("encode_seconds", round(encodeSeconds));
    figures.put("tree_build_seconds", round(buildSeconds));
    Map<String, Object> samplers = new LinkedHashMap<>();
    results.forEach((name, acc) -> samplers.put(name, acc.figures()));
    figures.put("samplers", samplers);
    return figures;
  }

  private static String name(int chain, int clusters, double radius, int exactInside, Options o) {
    return "mh chain "
        + chain
        + " clusters "
        + clusters
        + " radius "
        + radius
        + (exactInside == 0
            ? " uniform inside"
            : " exact inside " + exactInside + " weighed " + o.exactTargets());
  }

  /**
   * {@code k} independent draws from the softmax over {@code logits}, {@code excluded} left out.
   */
  private static int[] draws(float[] logits, int excluded, int k, SplittableRandom random) {
    double max = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < logits.length; i++) {
      max = i == excluded ? max : Math.max(max, logits[i]);
    }
    double[] cumulative = new double[logits.length];
    double total = 0;
    for (int i = 0; i < logits.length; i++) {
      total += i == excluded ? 0 : Math.exp(logits[i] - max);
      cumulative[i] = total;
    }
    int[] out = new int[k];
    for (int j = 0; j < k; j++) {
      int at = Arrays.binarySearch(cumulative, random.nextDouble() * total);
      at = Math.min(logits.length - 1, at >= 0 ? at + 1 : -at - 1);
      while (at == excluded || (at > 0 && cumulative[at] == cumulative[at - 1])) {
        at = at == logits.length - 1 ? at - 1 : at + 1;
      }
      out[j] = at;
    }
    return out;
  }

  private static double round(double v) {
    return Math.round(v * 1000) / 1000.0;
  }

  /** Means of the fidelity figures (and milliseconds per query) over the queries. */
  private static final class Accumulator {
    private final SoftmaxFidelity.Mean mean = new SoftmaxFidelity.Mean();
    private double millis;
    private int queries;

    void add(
        List<SoftmaxFidelity.Part> parts,
        int[] picks,
        float[] exact,
        List<String> ids,
        int k,
        double millis) {
      List<String> pickIds = new ArrayList<>();
      float[] logits = new float[picks.length];
      for (int i = 0; i < picks.length; i++) {
        pickIds.add(ids.get(picks[i]));
        logits[i] = exact[picks[i]];
      }
      mean.add(SoftmaxFidelity.measure(parts, pickIds, logits, k, NegativesMode.SAMPLE));
      this.millis += millis;
      queries++;
    }

    Map<String, Object> figures() {
      Map<String, Object> out = new LinkedHashMap<>();
      mean.mean().asMap().forEach((name, value) -> out.put(name, round(value)));
      out.put("ms_per_query", queries == 0 ? null : round(millis / queries));
      return out;
    }
  }
}
