package io.dynnibal.bench.index;

import io.dynnibal.bench.Stages;
import io.dynnibal.index.ClusteredVectors;
import io.dynnibal.index.VectorMath;
import io.dynnibal.index.exact.ExactSoftmaxMiner;
import io.dynnibal.index.sampling.Cluster;
import io.dynnibal.index.sampling.ExactSampler;
import io.dynnibal.index.sampling.FindClustering;
import io.dynnibal.index.sampling.MetropolisHastingsSampler;
import io.dynnibal.index.sampling.NegativeSampler;
import io.dynnibal.index.sampling.Partition;
import io.dynnibal.index.sampling.Samples;
import io.dynnibal.index.sgtree.SgTree;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

/**
 * {@code dynnibal bench index}: the practical DyNNIBAL sampler (FindClustering + top-k clusters +
 * chains of 2, best distinct targets kept) against brute force (every target scored, top K kept),
 * one query at a time and blocked (a batch of queries against the contiguous cache, {@link
 * ExactSoftmaxMiner}), on the same vectors in the same JVM, one thread each. Targets are a
 * hierarchical Gaussian mixture on the unit sphere; queries lie near random targets.
 */
public final class IndexBenchmark {
  /** Queries scored together by the blocked exact peer: a trainer's batch of queries. */
  private static final int BATCH = 16;

  /** What to run; defaults follow the paper's practical settings (App. D). */
  public record Config(
      int targets,
      int dim,
      int queries,
      int negatives,
      long seed,
      double base,
      double beta,
      double gamma,
      double deepestRadius,
      int maxClusters,
      int candidatesPerNegative,
      int chainLength) {

    public static Config defaults(int targets, int dim, int queries, int negatives, long seed) {
      return new Config(targets, dim, queries, negatives, seed, 1.3, 20, 1e6, 0.3, 300, 8, 16);
    }

    FindClustering.Options clustering() {
      return new FindClustering.Options(beta, gamma, deepestRadius, maxClusters);
    }
  }

  private IndexBenchmark() {}

  /**
   * Runs the benchmark and returns its figures (progress null: quietly), showing each stage on
   * {@code progress}.
   */
  public static Map<String, Object> run(Config config, PrintStream progress) {
    Stages stages = new Stages(progress, "index", config.targets() <= 100_000 ? 6 : 5);
    stages.next(String.format("%,d clustered vectors and the SG tree", config.targets()));
    float[][] vectors = ClusteredVectors.generate(config.targets(), config.dim(), config.seed());
    int[] ids = new int[vectors.length];
    Arrays.setAll(ids, i -> i);
    SplittableRandom random = new SplittableRandom(config.seed() ^ 0x9E3779B97F4A7C15L);
    float[][] queries = new float[config.queries()][];
    for (int q = 0; q < queries.length; q++) {
      queries[q] = ClusteredVectors.queryNear(vectors[random.nextInt(vectors.length)], 0.3, random);
    }

    long start = System.nanoTime();
    SgTree tree = SgTree.build(config.dim(), config.base(), ids, vectors, config.seed());
    double buildSeconds = (System.nanoTime() - start) / 1e9;

    MetropolisHastingsSampler practical =
        new MetropolisHastingsSampler(
            MetropolisHastingsSampler.Options.practical(
                config.clustering(), config.candidatesPerNegative()));
    int k = config.negatives();
    // Warm both code paths before timing (JIT), on queries that are not measured.
    for (int w = 0; w < Math.min(20, queries.length); w++) {
      practical.sample(tree, queries[w], k, new SplittableRandom(w));
      exactTop(vectors, queries[w], k);
    }

    stages.next(queries.length + " queries through the practical sampler");
    int[][] sampled = new int[queries.length][];
    double sampledLogitSum = 0;
    long partitionSizes = 0;
    start = System.nanoTime();
    for (int q = 0; q < queries.length; q++) {
      Samples s = practical.sample(tree, queries[q], k, new SplittableRandom(config.seed() + q));
      sampled[q] = s.targets();
      for (double logit : s.logits()) {
        sampledLogitSum += logit;
      }
    }
    double samplerMs = (System.nanoTime() - start) / 1e6 / queries.length;
    for (float[] query : queries) {
      partitionSizes += FindClustering.find(tree, query, config.clustering()).size();
    }

    stages.next(queries.length + " queries by brute force");
    int[][] exact = new int[queries.length][];
    start = System.nanoTime();
    for (int q = 0; q < queries.length; q++) {
      exact[q] = exactTop(vectors, queries[q], k);
    }
    double bruteMs = (System.nanoTime() - start) / 1e6 / queries.length;

    stages.next(queries.length + " queries by blocked exact scoring, " + BATCH + " at a time");
    ExactSoftmaxMiner blocked = new ExactSoftmaxMiner(vectors);
    // Warm (JIT) on a slice of the rows: the Vector API runs fast only once compiled.
    ExactSoftmaxMiner slice =
        new ExactSoftmaxMiner(Arrays.copyOf(vectors, Math.min(4096, vectors.length)));
    float[][] warmBatch = Arrays.copyOf(queries, Math.min(BATCH, queries.length));
    for (int w = 0; w < 400; w++) {
      float[][] scores = slice.scores(warmBatch);
      ExactSoftmaxMiner.topK(scores[w % warmBatch.length], k);
    }
    int agreeing = 0;
    start = System.nanoTime();
    for (int from = 0; from < queries.length; from += BATCH) {
      float[][] batch = Arrays.copyOfRange(queries, from, Math.min(queries.length, from + BATCH));
      float[][] scores = blocked.scores(batch);
      for (int q = 0; q < batch.length; q++) {
        int[] top = ExactSoftmaxMiner.topK(scores[q], k);
        agreeing += sameSet(top, exact[from + q]) ? 1 : 0;
      }
    }
    double blockedMs = (System.nanoTime() - start) / 1e6 / queries.length;

    // The exact-cache sampler's pass over the tree's 8-bit snapshot, a batch of queries at a time.
    ExactSampler treeExact = new ExactSampler(config.beta(), true, k);
    for (int w = 0; w < 400; w += BATCH) { // compiled, as the blocked pass above (the Vector API)
      for (NegativeSampler.Prepared p : treeExact.prepareAll(tree, warmBatch, null)) {
        p.sample(k, new SplittableRandom(w));
      }
    }
    int[][] treeExactTop = new int[queries.length][];
    start = System.nanoTime();
    for (int from = 0; from < queries.length; from += BATCH) {
      float[][] batch = Arrays.copyOfRange(queries, from, Math.min(queries.length, from + BATCH));
      NegativeSampler.Prepared[] prepared = treeExact.prepareAll(tree, batch, null);
      for (int q = 0; q < batch.length; q++) {
        treeExactTop[from + q] = prepared[q].sample(k, new SplittableRandom(q)).targets();
      }
    }
    double treeExactMs = (System.nanoTime() - start) / 1e6 / queries.length;

    stages.next("overlap with the exact top-K");
    double overlap = 0;
    double treeExactOverlap = 0;
    double exactLogitSum = 0;
    long sampledCount = 0;
    for (int q = 0; q < queries.length; q++) {
      var exactSet = Arrays.stream(exact[q]).boxed().collect(java.util.stream.Collectors.toSet());
      overlap += Arrays.stream(sampled[q]).filter(exactSet::contains).count() / (double) k;
      treeExactOverlap +=
          Arrays.stream(treeExactTop[q]).filter(exactSet::contains).count() / (double) k;
      for (int t : exact[q]) {
        exactLogitSum += config.beta() * VectorMath.dot(queries[q], vectors[t]);
      }
      sampledCount += sampled[q].length;
    }

    Map<String, Object> out = new LinkedHashMap<>();
    out.put("targets", config.targets());
    out.put("dim", config.dim());
    out.put("queries", config.queries());
    out.put("negatives", k);
    out.put("seed", config.seed());
    out.put("base", config.base());
    out.put("beta", config.beta());
    out.put(
        "sampler",
        "dynnibal-mh practical: closest of <= "
            + config.maxClusters()
            + " clusters holding "
            + config.candidatesPerNegative()
            + " targets per negative, 4 chains of 2 per negative");
    out.put("build_seconds", buildSeconds);
    out.put("sampler_ms_per_query", samplerMs);
    out.put("bruteforce_ms_per_query", bruteMs);
    out.put("speedup", bruteMs / samplerMs);
    out.put("blocked_exact_ms_per_query", blockedMs);
    out.put("speedup_vs_blocked_exact", blockedMs / samplerMs);
    out.put("blocked_exact_topk_as_bruteforce", agreeing / (double) queries.length);
    out.put("exact_cache_ms_per_query", treeExactMs);
    out.put("speedup_vs_exact_cache", treeExactMs / samplerMs);
    out.put("exact_cache_overlap_with_exact_topk", treeExactOverlap / queries.length);
    out.put("overlap_with_exact_topk", overlap / queries.length);
    out.put("mean_logit_sampled", sampledLogitSum / sampledCount);
    out.put("mean_logit_exact_topk", exactLogitSum / ((long) k * queries.length));
    out.put("mean_partition_size", partitionSizes / (double) queries.length);
    out.put("mean_distinct_sampled", sampledCount / (double) queries.length);
    if (config.targets() <= 100_000) {
      stages.next("total variation distance to the softmax");
      double[] tv = meanTotalVariation(tree, vectors, queries, config);
      out.put("tv_distance", tv[config.chainLength() - 1]);
      out.put(
          "tv_distance_sampler",
          "exact-mode MH (last state of each chain) on the same partitions; the practical"
              + " sampler above keeps the best distinct targets instead and has no TV of its own");
      out.put("tv_distance_chain_length", config.chainLength());
      out.put("tv_distance_proposal_only", tv[0]);
    }
    return out;
  }

  /**
   * Exact TV to the softmax of the exact-mode MH chain, by chain length, averaged over up to 20
   * queries.
   */
  private static double[] meanTotalVariation(
      SgTree tree, float[][] vectors, float[][] queries, Config config) {
    int n = Math.min(20, queries.length);
    double[] mean = new double[config.chainLength()];
    for (int q = 0; q < n; q++) {
      double[] p = new double[vectors.length];
      double[] proposal = new double[vectors.length];
      double maxLogit = Double.NEGATIVE_INFINITY;
      for (int i = 0; i < vectors.length; i++) {
        p[i] = config.beta() * VectorMath.dot(queries[q], vectors[i]);
        maxLogit = Math.max(maxLogit, p[i]);
      }
      Partition partition = FindClustering.find(tree, queries[q], config.clustering());
      for (int c = 0; c < partition.size(); c++) {
        Cluster cluster = partition.clusters().get(c);
        double logit = config.beta() * partition.representativeScores()[c];
        for (int j = 0; j < cluster.size(); j++) {
          proposal[cluster.locate(j).target()] = Math.exp(logit - maxLogit);
        }
      }
      for (int i = 0; i < p.length; i++) {
        p[i] = Math.exp(p[i] - maxLogit);
      }
      normalise(p);
      normalise(proposal);
      double[] tv =
          IndependentChainDistance.totalVariationByLength(p, proposal, config.chainLength());
      for (int s = 0; s < tv.length; s++) {
        mean[s] += tv[s] / n;
      }
    }
    return mean;
  }

  static void normalise(double[] v) {
    double sum = 0;
    for (double x : v) {
      sum += x;
    }
    for (int i = 0; i < v.length; i++) {
      v[i] /= sum;
    }
  }

  private static boolean sameSet(int[] a, int[] b) {
    int[] x = a.clone();
    int[] y = b.clone();
    Arrays.sort(x);
    Arrays.sort(y);
    return Arrays.equals(x, y);
  }

  /** Brute force: score every target, keep the K best in a heap. */
  static int[] exactTop(float[][] vectors, float[] query, int k) {
    PriorityQueue<double[]> heap = new PriorityQueue<>((a, b) -> Double.compare(a[0], b[0]));
    for (int i = 0; i < vectors.length; i++) {
      double score = VectorMath.dot(query, vectors[i]);
      if (heap.size() < k) {
        heap.add(new double[] {score, i});
      } else if (score > heap.peek()[0]) {
        heap.poll();
        heap.add(new double[] {score, i});
      }
    }
    return heap.stream().mapToInt(e -> (int) e[1]).toArray();
  }
}
