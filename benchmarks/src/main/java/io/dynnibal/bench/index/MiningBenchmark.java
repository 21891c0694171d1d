package io.dynnibal.bench.index;

import io.dynnibal.bench.Stages;
import io.dynnibal.index.ClusteredVectors;
import io.dynnibal.index.VectorMath;
import io.dynnibal.index.exact.ExactSoftmaxMiner;
import io.dynnibal.index.sampling.ExactSampler;
import io.dynnibal.index.sampling.FindClustering;
import io.dynnibal.index.sampling.MetropolisHastingsSampler;
import io.dynnibal.index.sampling.NegativeSampler;
import io.dynnibal.index.sampling.Samples;
import io.dynnibal.index.sgtree.SgTree;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.negatives.SoftmaxFidelity;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;
import java.util.stream.IntStream;

/**
 * {@code dynnibal bench mining}: what a shard's mining costs per query, and how close it comes to
 * the exact softmax, as a shard of each size mines a trainer's batches in sample mode: brute force
 * one query at a time over float rows, brute force blocked over float rows ({@link
 * ExactSoftmaxMiner}), the exact softmax over the tree's 8-bit cache blocked ({@link ExactSampler},
 * the {@code exact-cache} sampler) and DyNNIBAL-MH at each cluster budget, a batch at a time (as
 * the shards mine) and, at the job's budget, one query at a time ({@code _per_query}), on the same
 * vectors and batches in one JVM, one thread. Fidelity is {@link SoftmaxFidelity}'s against the
 * exact softmax over the float vectors; {@code kb_allocated_per_query} is the heap the timed
 * batches allocated.
 */
public final class MiningBenchmark {
  /** Rows of the float peers' score matrix at once: a batch's queries against the whole cache. */
  private static final int FLOAT_PEER_QUERIES = 16;

  /** The shard every method runs on once before the timed ones. */
  private static final int WARM_UP_TARGETS = 32_768;

  /** Draws per query that fidelity is measured from. */
  static final int FIDELITY_DRAWS = 16;

  /** What to run. */
  public record Config(
      int[] targets,
      int dim,
      int batch,
      int batches,
      int negatives,
      long seed,
      double beta,
      double base,
      int chainLength,
      int exactInside,
      int exactTargets,
      double clusterShare,
      int maxClusters,
      int[] budgets) {

    /** The job's cluster budget for a shard of {@code n} targets ({@code mh.cluster.share}). */
    int jobBudget(int n) {
      return clusterShare == 0
          ? maxClusters
          : (int) Math.min(maxClusters, Math.round(clusterShare * n));
    }
  }

  private MiningBenchmark() {}

  public static Map<String, Object> run(Config config, PrintStream progress) {
    Stages stages = new Stages(progress, "mining", config.targets().length + 1);
    // Every method compiled before any is timed: a first shard's figures were the JIT's otherwise.
    stages.next("warming up on a shard of " + WARM_UP_TARGETS + " targets (not reported)");
    shard(config, Math.min(WARM_UP_TARGETS, Arrays.stream(config.targets()).min().orElse(1)));
    List<Map<String, Object>> shards = new ArrayList<>();
    for (int n : config.targets()) {
      stages.next(String.format("a shard of %,d targets", n));
      shards.add(shard(config, n));
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("dim", config.dim());
    out.put("batch", config.batch());
    out.put("timed_queries", config.batch() * config.batches());
    out.put("negatives", config.negatives());
    out.put("beta", config.beta());
    out.put("seed", config.seed());
    out.put(
        "mh",
        "sample mode, chains of "
            + config.chainLength()
            + ", exact inside "
            + config.exactInside()
            + ", exact targets "
            + config.exactTargets());
    out.put("shards", shards);
    return out;
  }

  private static Map<String, Object> shard(Config config, int n) {
    float[][] vectors = ClusteredVectors.generate(n, config.dim(), config.seed());
    int[] ids = new int[n];
    Arrays.setAll(ids, i -> i);
    List<String> names = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      names.add(Integer.toString(i));
    }
    SplittableRandom random = new SplittableRandom(config.seed() ^ n);
    float[][][] batches = new float[config.batches() + 1][config.batch()][]; // the first warms
    for (float[][] b : batches) {
      for (int q = 0; q < b.length; q++) {
        b[q] = ClusteredVectors.queryNear(vectors[random.nextInt(n)], 0.3, random);
      }
    }
    long start = System.nanoTime();
    SgTree tree = SgTree.build(config.dim(), config.base(), ids, vectors, config.seed());
    double buildSeconds = (System.nanoTime() - start) / 1e9;
    ExactSoftmaxMiner floats = new ExactSoftmaxMiner(vectors);
    Reference exact = Reference.of(floats, vectors, names, batches, config);

    Map<String, Object> methods = new LinkedHashMap<>();
    Function<Miner, Map<String, Object>> timed =
        miner -> measure(config, batches, config.batches(), exact, miner);
    // One query at a time over float rows: the first timed batch only (it is the slowest by far).
    methods.put(
        "bruteforce",
        measure(
            config,
            batches,
            1,
            exact,
            (b, c, r) -> {
              Samples[] out = new Samples[b.length];
              float[] scores = new float[n];
              for (int q = 0; q < b.length; q++) {
                for (int row = 0; row < n; row++) {
                  scores[row] = (float) VectorMath.dot(b[q], vectors[row]);
                }
                out[q] = draws(scores, config.beta(), c, r);
              }
              return out;
            }));
    methods.put(
        "blocked_float",
        timed.apply(
            (b, c, r) -> {
              Samples[] out = new Samples[b.length];
              for (int from = 0; from < b.length; from += FLOAT_PEER_QUERIES) {
                float[][] part =
                    Arrays.copyOfRange(b, from, Math.min(b.length, from + FLOAT_PEER_QUERIES));
                float[][] scores = floats.scores(part);
                for (int q = 0; q < part.length; q++) {
                  out[from + q] = draws(scores[q], config.beta(), c, r);
                }
              }
              return out;
            }));
    ExactSampler exactCache = new ExactSampler(config.beta(), false);
    methods.put(
        "exact_cache",
        timed.apply((b, c, r) -> sampleAll(exactCache.prepareAll(tree, b, null), c, r)));
    int[] budgets =
        IntStream.concat(Arrays.stream(config.budgets()), IntStream.of(config.jobBudget(n)))
            .filter(b -> b > 0 && b <= n)
            .distinct()
            .sorted()
            .toArray();
    for (int budget : budgets) {
      NegativeSampler mh =
          new MetropolisHastingsSampler(
              MetropolisHastingsSampler.Options.sampling(
                  new FindClustering.Options(config.beta(), 1e6, 0.3, budget),
                  config.chainLength(),
                  config.exactInside(),
                  config.exactTargets()));
      methods.put(
          "mh_" + budget, timed.apply((b, c, r) -> sampleAll(mh.prepareAll(tree, b, null), c, r)));
      if (budget == config.jobBudget(n)) {
        methods.put(
            "mh_" + budget + "_per_query",
            timed.apply(
                (b, c, r) ->
                    sampleAll(
                        Arrays.stream(b)
                            .map(q -> mh.prepare(tree, q, q))
                            .toArray(NegativeSampler.Prepared[]::new),
                        c,
                        r)));
      }
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("targets", n);
    out.put("job_budget", config.jobBudget(n));
    out.put("build_seconds", buildSeconds);
    out.put("methods", methods);
    return out;
  }

  /** A method mining one batch: each query's draws. */
  private interface Miner {
    Samples[] mine(float[][] batch, int count, SplittableRandom random);
  }

  /**
   * Timed over {@code timed} batches, drawing the job's {@code negatives} per query, after two
   * warm-up batches; fidelity over the same batches, untimed, from {@link #FIDELITY_DRAWS} draws
   * per query (one draw's figures vary too much from query to query to compare methods).
   */
  private static Map<String, Object> measure(
      Config config, float[][][] batches, int timed, Reference exact, Miner miner) {
    for (int w = 0; w < 2; w++) {
      miner.mine(batches[0], config.negatives(), new SplittableRandom(config.seed() - w));
    }
    long nanos = 0;
    long allocatedBefore = allocatedBytes();
    for (int b = 1; b <= timed; b++) {
      SplittableRandom random = new SplittableRandom(config.seed() + b);
      long start = System.nanoTime();
      miner.mine(batches[b], config.negatives(), random);
      nanos += System.nanoTime() - start;
    }
    long allocated = allocatedBefore < 0 ? -1 : allocatedBytes() - allocatedBefore;
    SoftmaxFidelity.Mean mean = new SoftmaxFidelity.Mean();
    for (int b = 1; b <= timed; b++) {
      Samples[] mined = miner.mine(batches[b], FIDELITY_DRAWS, new SplittableRandom(-b));
      for (int q = 0; q < mined.length; q++) {
        List<String> picks = new ArrayList<>();
        float[] logits = new float[mined[q].size()];
        for (int i = 0; i < logits.length; i++) {
          int target = mined[q].targets()[i];
          picks.add(exact.names.get(target));
          logits[i] =
              (float) (config.beta() * VectorMath.dot(batches[b][q], exact.vectors[target]));
        }
        mean.add(
            SoftmaxFidelity.measure(
                List.of(exact.parts[b][q]),
                picks,
                logits,
                FIDELITY_DRAWS,
                NegativesMode.SAMPLE,
                mined[q].logMass()));
      }
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("us_per_query", nanos / 1e3 / ((long) timed * config.batch()));
    if (allocated >= 0) { // not where the JVM cannot count a thread's allocation
      out.put("kb_allocated_per_query", allocated / 1024.0 / ((long) timed * config.batch()));
    }
    SoftmaxFidelity.Figures f = mean.mean();
    out.put("overlap_topk", f.overlapTopk());
    out.put("logit_ratio", f.logitRatio());
    out.put("mass_ratio", f.massRatio());
    out.put("normaliser_error", f.normaliserError());
    return out;
  }

  /** The exact softmax over the float vectors, for every query of every batch. */
  private record Reference(float[][] vectors, List<String> names, SoftmaxFidelity.Part[][] parts) {
    static Reference of(
        ExactSoftmaxMiner floats,
        float[][] vectors,
        List<String> names,
        float[][][] batches,
        Config config) {
      SoftmaxFidelity.Part[][] parts = new SoftmaxFidelity.Part[batches.length][];
      for (int b = 0; b < batches.length; b++) {
        parts[b] = new SoftmaxFidelity.Part[batches[b].length];
        for (int from = 0; from < batches[b].length; from += FLOAT_PEER_QUERIES) {
          float[][] part =
              Arrays.copyOfRange(
                  batches[b], from, Math.min(batches[b].length, from + FLOAT_PEER_QUERIES));
          float[][] scores = floats.scores(part);
          for (int q = 0; q < part.length; q++) {
            float[] logits = scores[q];
            for (int r = 0; r < logits.length; r++) {
              logits[r] *= (float) config.beta();
            }
            parts[b][from + q] = SoftmaxFidelity.Part.of(names, logits, -1, FIDELITY_DRAWS);
          }
        }
      }
      return new Reference(vectors, names, parts);
    }
  }

  /**
   * {@code negatives} exact draws from the softmax of {@code beta * scores}, with its normaliser.
   */
  private static Samples draws(float[] scores, double beta, int count, SplittableRandom random) {
    int[] drawn = ExactSoftmaxMiner.sample(scores, beta, count, random);
    double max = Double.NEGATIVE_INFINITY;
    for (float s : scores) {
      max = Math.max(max, beta * s);
    }
    double sum = 0;
    for (float s : scores) {
      sum += Math.exp(beta * s - max);
    }
    double[] logits = new double[drawn.length];
    for (int i = 0; i < drawn.length; i++) {
      logits[i] = beta * scores[drawn[i]];
    }
    return new Samples(drawn, logits, 0, 0, max + Math.log(sum));
  }

  /** The heap this thread has allocated so far (-1 where the JVM does not count it). */
  private static long allocatedBytes() {
    return ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t
        ? t.getCurrentThreadAllocatedBytes()
        : -1;
  }

  private static Samples[] sampleAll(
      NegativeSampler.Prepared[] prepared, int count, SplittableRandom random) {
    Samples[] out = new Samples[prepared.length];
    for (int q = 0; q < prepared.length; q++) {
      out[q] = prepared[q].sample(count, random);
    }
    return out;
  }
}
