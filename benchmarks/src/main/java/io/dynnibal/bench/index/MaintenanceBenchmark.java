package io.dynnibal.bench.index;

import io.dynnibal.bench.Stages;
import io.dynnibal.index.ClusteredVectors;
import io.dynnibal.index.nystrom.CacheMap;
import io.dynnibal.index.sampling.FindClustering;
import io.dynnibal.index.sampling.MetropolisHastingsSampler;
import io.dynnibal.index.sgtree.SgTree;
import io.dynnibal.index.sgtree.TreeRepair;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.Collectors;
import org.apache.lucene.codecs.hnsw.DefaultFlatVectorScorer;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.util.hnsw.HnswGraphBuilder;
import org.apache.lucene.util.hnsw.RandomAccessVectorValues;

/**
 * {@code dynnibal bench maintenance}: what it costs to keep the index usable after the cache moves
 * (a re-encoding map applied to every cached vector). DyNNIBAL repairs its SG tree (Alg. 3); the
 * alternatives are a full rebuild of the tree and, for a user of a graph index, rebuilding Lucene's
 * HNSW graph over the same vectors. Sampler quality (overlap of the practical sampler with the
 * exact top K) is measured after the repair and after the full rebuild.
 */
public final class MaintenanceBenchmark {

  /**
   * @param drift strength of the near-identity map {@code I + drift * G / sqrt(d)}, G uniform in
   *     [-0.5, 0.5]
   * @param hnsw whether to time the Lucene HNSW rebuild (slow at millions of vectors)
   */
  public record Config(
      int targets,
      int dim,
      double drift,
      long seed,
      int queries,
      int negatives,
      TreeRepair.Mode mode,
      boolean hnsw) {}

  private MaintenanceBenchmark() {}

  /**
   * Runs the benchmark and returns its figures (progress null: quietly), showing each stage on
   * {@code progress}.
   */
  public static Map<String, Object> run(Config config, PrintStream progress) {
    Stages stages = new Stages(progress, "maintenance", config.hnsw() ? 5 : 4);
    stages.next(String.format("warm-up, then %,d vectors and their SG tree", config.targets()));
    float[][] vectors = ClusteredVectors.generate(config.targets(), config.dim(), config.seed());
    int[] ids = new int[vectors.length];
    Arrays.setAll(ids, i -> i);
    warmUp(config);
    long start = System.nanoTime();
    SgTree tree = SgTree.build(config.dim(), 1.3, ids, vectors, config.seed());
    double initialBuild = seconds(start);

    stages.next("moving the cache by the map and repairing the tree");
    CacheMap map = nearIdentity(config.dim(), config.drift(), config.seed() + 1);
    float[] scratch = new float[config.dim()];
    start = System.nanoTime();
    double drift = tree.moveVectors(v -> map.applyInPlace(v, scratch));
    double applySeconds = seconds(start);
    start = System.nanoTime();
    for (float[] v : vectors) {
      // The same move for the rebuild below; timed, it is all that the blocked exact pass's flat
      // cache needs, where the tree needs its repair as well.
      map.applyInPlace(v, scratch);
    }
    double flatMoveSeconds = seconds(start);

    start = System.nanoTime();
    TreeRepair.Report report = TreeRepair.repair(tree, drift, config.mode(), config.seed() + 2);
    double repairSeconds = seconds(start);

    stages.next("rebuilding the tree");
    start = System.nanoTime();
    SgTree rebuilt = SgTree.build(config.dim(), 1.3, ids, vectors, config.seed());
    double rebuildSeconds = seconds(start);

    Map<String, Object> out = new LinkedHashMap<>();
    out.put("targets", config.targets());
    out.put("dim", config.dim());
    out.put("drift_strength", config.drift());
    out.put("seed", config.seed());
    out.put("mode", config.mode().name().toLowerCase());
    out.put("max_displacement", drift);
    out.put("initial_build_seconds", initialBuild);
    out.put("apply_map_seconds", applySeconds);
    out.put("repair_seconds", repairSeconds);
    out.put("full_rebuild_seconds", rebuildSeconds);
    out.put("speedup_vs_rebuild", rebuildSeconds / repairSeconds);
    out.put("flat_cache_move_seconds", flatMoveSeconds);
    out.put("upkeep_vs_flat_cache", (applySeconds + repairSeconds) / flatMoveSeconds);
    if (config.hnsw()) {
      stages.next("Lucene HNSW over the same vectors");
      double hnswSeconds = hnswBuildSeconds(vectors, config.seed());
      out.put("lucene_hnsw_rebuild_seconds", hnswSeconds);
      out.put("speedup_vs_hnsw", hnswSeconds / repairSeconds);
    }
    out.put("subtrees_rebuilt", report.subtreesRebuilt());
    out.put("subtrees_reinserted", report.subtreesReinserted());
    out.put("nodes_rebuilt_fraction", report.rebuiltFraction());
    stages.next(config.queries() + " queries of sampler quality");
    double[] quality = samplerQuality(tree, rebuilt, vectors, config);
    out.put("sampler_overlap_after_repair", quality[0]);
    out.put("sampler_overlap_after_rebuild", quality[1]);
    return out;
  }

  /**
   * Compiles build, move and repair on a small tree first, so that neither timing below includes
   * the JIT's work.
   */
  private static void warmUp(Config config) {
    int n = Math.min(config.targets(), 20_000);
    float[][] vectors = ClusteredVectors.generate(n, config.dim(), config.seed() + 7);
    int[] ids = new int[n];
    Arrays.setAll(ids, i -> i);
    for (int round = 0; round < 2; round++) {
      SgTree tree = SgTree.build(config.dim(), 1.3, ids, vectors, round);
      CacheMap map = nearIdentity(config.dim(), config.drift(), round);
      float[] scratch = new float[config.dim()];
      double drift = tree.moveVectors(v -> map.applyInPlace(v, scratch));
      TreeRepair.repair(tree, drift, config.mode(), round);
    }
  }

  /** Lucene 9.12's HNSW graph over the vectors (M 16, beam 100, Euclidean), single thread. */
  static double hnswBuildSeconds(float[][] vectors, long seed) {
    try {
      long start = System.nanoTime();
      RandomAccessVectorValues.Floats values =
          RandomAccessVectorValues.fromFloats(List.of(vectors), vectors[0].length);
      HnswGraphBuilder builder =
          HnswGraphBuilder.create(
              DefaultFlatVectorScorer.INSTANCE.getRandomVectorScorerSupplier(
                  VectorSimilarityFunction.EUCLIDEAN, values),
              16,
              100,
              seed);
      builder.build(values.size());
      return seconds(start);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static double[] samplerQuality(
      SgTree repaired, SgTree rebuilt, float[][] vectors, Config config) {
    MetropolisHastingsSampler sampler =
        new MetropolisHastingsSampler(
            MetropolisHastingsSampler.Options.practical(
                new FindClustering.Options(20, 1e6, 0.3, 300), 8));
    SplittableRandom random = new SplittableRandom(config.seed() + 3);
    double[] overlap = new double[2];
    int k = config.negatives();
    for (int q = 0; q < config.queries(); q++) {
      float[] query =
          ClusteredVectors.queryNear(vectors[random.nextInt(vectors.length)], 0.3, random);
      Set<Integer> top =
          Arrays.stream(IndexBenchmark.exactTop(vectors, query, k))
              .boxed()
              .collect(Collectors.toSet());
      overlap[0] +=
          Arrays.stream(sampler.sample(repaired, query, k, new SplittableRandom(q)).targets())
                  .filter(top::contains)
                  .count()
              / (double) k;
      overlap[1] +=
          Arrays.stream(sampler.sample(rebuilt, query, k, new SplittableRandom(q)).targets())
                  .filter(top::contains)
                  .count()
              / (double) k;
    }
    overlap[0] /= config.queries();
    overlap[1] /= config.queries();
    return overlap;
  }

  static CacheMap nearIdentity(int dim, double strength, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    float[] m = new float[dim * dim];
    for (int i = 0; i < dim; i++) {
      for (int j = 0; j < dim; j++) {
        m[i * dim + j] =
            (float) ((i == j ? 1 : 0) + strength * (random.nextDouble() - 0.5) / Math.sqrt(dim));
      }
    }
    return new CacheMap(dim, m);
  }

  static double seconds(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e9;
  }
}
