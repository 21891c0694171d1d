package io.dynnibal.bench.index;

import io.dynnibal.bench.Stages;
import io.dynnibal.index.ClusteredVectors;
import io.dynnibal.index.VectorMath;
import io.dynnibal.index.nystrom.NystromProjector;
import io.dynnibal.index.nystrom.ReEncodingRegression;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * {@code dynnibal bench reencode}: approximate re-encoding (Alg. 4/5: encode s' targets and the
 * landmarks with the new tower, fit the regression, move every cached vector by one d' x d' map)
 * against running the new tower over every target, on the same targets. The towers are a synthetic
 * two-layer MLP from raw features ({@code normalise(W2 tanh(W1 x))}, 256 -> 512 -> 128) whose
 * weights drift between the old and new version; the DJL tower replaces it once the training
 * operator lands. A real transformer tower costs far more per target than this MLP, so the speedup
 * here understates the one a user sees.
 */
public final class ReencodeBenchmark {
  private static final int INPUT = 256;
  private static final int HIDDEN = 512;
  private static final int OUTPUT = 128;

  public record Config(int targets, int landmarks, int samples, double drift, long seed) {}

  private ReencodeBenchmark() {}

  /** A synthetic target tower. */
  record Tower(float[][] w1, float[][] w2) {
    static Tower random(SplittableRandom random) {
      return new Tower(gaussian(HIDDEN, INPUT, random), gaussian(OUTPUT, HIDDEN, random));
    }

    Tower drifted(double drift, SplittableRandom random) {
      return new Tower(perturb(w1, drift, random), perturb(w2, drift, random));
    }

    float[] encode(float[] x) {
      float[] h = new float[HIDDEN];
      for (int i = 0; i < HIDDEN; i++) {
        h[i] = (float) Math.tanh(VectorMath.dot(w1[i], x));
      }
      float[] y = new float[OUTPUT];
      double norm = 0;
      for (int i = 0; i < OUTPUT; i++) {
        y[i] = (float) VectorMath.dot(w2[i], h);
        norm += (double) y[i] * y[i];
      }
      float inverse = (float) (1 / Math.sqrt(norm));
      for (int i = 0; i < OUTPUT; i++) {
        y[i] *= inverse;
      }
      return y;
    }

    private static float[][] gaussian(int rows, int cols, SplittableRandom random) {
      float[][] w = new float[rows][cols];
      double scale = Math.sqrt(3.0 / cols);
      for (float[] row : w) {
        for (int j = 0; j < cols; j++) {
          row[j] = (float) (scale * (2 * random.nextDouble() - 1));
        }
      }
      return w;
    }

    private static float[][] perturb(float[][] w, double drift, SplittableRandom random) {
      float[][] out = new float[w.length][];
      double scale = drift * Math.sqrt(3.0 / w[0].length);
      for (int i = 0; i < w.length; i++) {
        out[i] = w[i].clone();
        for (int j = 0; j < out[i].length; j++) {
          out[i][j] += (float) (scale * (2 * random.nextDouble() - 1));
        }
      }
      return out;
    }
  }

  /**
   * Runs the benchmark and returns its figures (progress null: quietly), showing each stage on
   * {@code progress}.
   */
  public static Map<String, Object> run(Config config, PrintStream progress) {
    Stages stages = new Stages(progress, "reencode", 3);
    if (config.landmarks() < 1
        || config.samples() < 1
        || config.landmarks() + config.samples() >= config.targets()) {
      throw new IllegalArgumentException("need landmarks + samples < targets, got " + config);
    }
    SplittableRandom random = new SplittableRandom(config.seed());
    float[][] features = ClusteredVectors.generate(config.targets(), INPUT, config.seed());
    Tower before = Tower.random(random);
    Tower after = before.drifted(config.drift(), random);
    int[] landmarkIds =
        random.ints(0, config.targets()).distinct().limit(config.landmarks()).toArray();
    int[] sampleIds = random.ints(0, config.targets()).distinct().limit(config.samples()).toArray();

    stages.next(String.format("the cache of %,d targets before the update", config.targets()));
    // The cache as it stands before the update (not timed: it exists already).
    float[][] landmarksBefore = new float[landmarkIds.length][];
    for (int i = 0; i < landmarkIds.length; i++) {
      landmarksBefore[i] = before.encode(features[landmarkIds[i]]);
    }
    NystromProjector old = NystromProjector.fit(landmarksBefore, 1e-6);
    float[][] cache = new float[config.targets()][];
    for (int t = 0; t < cache.length; t++) {
      cache[t] = old.project(before.encode(features[t]));
    }

    // Quality is judged on targets the map was not fitted on; the stale cache is compared in its
    // own (old) basis.
    Set<Integer> fitted = new HashSet<>();
    Arrays.stream(landmarkIds).forEach(fitted::add);
    Arrays.stream(sampleIds).forEach(fitted::add);
    double stale = 0;
    for (int t = 0; t < cache.length; t++) {
      if (!fitted.contains(t)) {
        stale += VectorMath.cosine(cache[t], old.project(after.encode(features[t])));
      }
    }
    stale /= cache.length - fitted.size();

    stages.next("the approximate re-encoding");
    // Approximate: s' + d' encodings with the new tower, the regression, one map over the whole
    // cache.
    long start = System.nanoTime();
    float[][] sampleCache = new float[sampleIds.length][];
    float[][] sampleEncodings = new float[sampleIds.length][];
    for (int i = 0; i < sampleIds.length; i++) {
      sampleCache[i] = cache[sampleIds[i]];
      sampleEncodings[i] = after.encode(features[sampleIds[i]]);
    }
    float[][] landmarksAfter = new float[landmarkIds.length][];
    for (int i = 0; i < landmarkIds.length; i++) {
      landmarksAfter[i] = after.encode(features[landmarkIds[i]]);
    }
    ReEncodingRegression.Result result =
        ReEncodingRegression.fit(sampleCache, sampleEncodings, landmarksAfter, 1e-4, 1e-6);
    float[] scratch = new float[config.landmarks()];
    for (float[] z : cache) {
      result.map().applyInPlace(z, scratch);
    }
    double approxSeconds = MaintenanceBenchmark.seconds(start);

    stages.next("the exact re-encoding");
    // Exact: the new tower over every target, projected with the same new landmarks.
    start = System.nanoTime();
    float[][] truth = new float[config.targets()][];
    for (int t = 0; t < truth.length; t++) {
      truth[t] = result.projector().project(after.encode(features[t]));
    }
    double fullSeconds = MaintenanceBenchmark.seconds(start);

    double cosine = 0;
    double worst = 1;
    for (int t = 0; t < truth.length; t++) {
      if (!fitted.contains(t)) {
        double c = VectorMath.cosine(cache[t], truth[t]);
        cosine += c;
        worst = Math.min(worst, c);
      }
    }
    cosine /= truth.length - fitted.size();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("targets", config.targets());
    out.put("landmarks", config.landmarks());
    out.put("samples", config.samples());
    out.put("drift", config.drift());
    out.put("seed", config.seed());
    out.put("encoder", "synthetic 2-layer MLP 256-512-128 (a stand-in for the DJL target tower)");
    out.put("approx_seconds", approxSeconds);
    out.put("full_encoder_seconds", fullSeconds);
    out.put("speedup", fullSeconds / approxSeconds);
    out.put("mean_cosine", cosine);
    out.put("min_cosine", worst);
    out.put("stale_cache_mean_cosine", stale);
    return out;
  }
}
