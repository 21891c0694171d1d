package io.dynnibal.bench.training;

import io.dynnibal.bench.Stages;
import io.dynnibal.data.JsonlCorpus;
import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.index.VectorMath;
import io.dynnibal.index.nystrom.CacheMap;
import io.dynnibal.index.nystrom.NystromProjector;
import io.dynnibal.index.nystrom.ReEncodingRegression;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.Features;
import io.dynnibal.training.DualEncoderTrainer;
import io.dynnibal.training.ProgressBar;
import io.dynnibal.training.TrainerConfig;
import io.dynnibal.training.TrainingBatch;
import io.dynnibal.training.local.UniformBatches;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Approximate re-encoding (Alg. 4/5) with the real DJL tower on a real corpus: after {@code w}
 * training steps, the whole Nyström cache is moved by one d' x d' map fitted on s' re-encoded
 * targets, and compared with re-encoding every target exactly (what the map replaces). Reports both
 * times and how close the moved cache is to the exact one.
 */
public final class TowerReencodeBenchmark {
  private TowerReencodeBenchmark() {}

  /** Targets encoded at a time when the whole cache is (re-)encoded. */
  private static final int ENCODE_PART = 512;

  public record Options(
      Path targets,
      Path train,
      int warmupSteps,
      int steps,
      int landmarks,
      int samples,
      int batch,
      long seed,
      DualEncoderConfig model,
      int maxTargets) {}

  /**
   * Runs the benchmark and returns its figures (progress null: quietly), showing each stage and the
   * training steps on {@code progress}.
   */
  public static Map<String, Object> run(Options o, PrintStream progress) {
    if (o.samples() < 2 * o.landmarks()) {
      throw new IllegalArgumentException(
          "--samples (s' = "
              + o.samples()
              + ") must be at least twice --landmarks (d' = "
              + o.landmarks()
              + "): the landmarks are among the samples, and the map has d' x d' entries to fit");
    }
    List<TargetText> targets = JsonlCorpus.readTargets(o.targets());
    List<LabelledQuery> train = JsonlCorpus.readQueries(o.train());
    if (o.maxTargets() > 0 && o.maxTargets() < targets.size()) {
      targets =
          io.dynnibal.training.local.LocalTraining.subset(
              targets, null, train, o.maxTargets(), o.seed());
    }
    boolean pretrained = o.model().towerKind() == io.dynnibal.model.TowerKind.TRANSFORMER;
    // A pretrained tower is fine-tuned (small constant rate, table at the same rate); the bag
    // tower learns from scratch.
    TrainerConfig trainerConfig =
        pretrained ? TrainerConfig.fineTuning() : TrainerConfig.fromScratch(50, 0);
    Map<String, Object> figures = new LinkedHashMap<>();
    Stages stages = new Stages(progress, "tower-reencode", 6);
    try (DualEncoder encoder = DualEncoder.create(o.model(), o.seed())) {
      stages.next(String.format("featurizing %,d targets", targets.size()));
      List<Features> features = new ArrayList<>(targets.size());
      Map<String, Integer> index = new HashMap<>();
      for (int i = 0; i < targets.size(); i++) {
        features.add(encoder.featurizeTarget(targets.get(i).text()));
        index.put(targets.get(i).targetId(), i);
      }
      DualEncoderTrainer trainer = new DualEncoderTrainer(encoder, trainerConfig);
      Random random = new Random(o.seed());
      stages.next(o.warmupSteps() + " warm-up steps of " + o.batch());
      train(trainer, train, features, index, targets, o.warmupSteps(), o.batch(), random, stages);

      // The cache at version k: exact projection of every target through landmarks drawn from the
      // targets.
      int[] landmarkIds = random.ints(0, targets.size()).distinct().limit(o.landmarks()).toArray();
      stages.next(String.format("encoding %,d targets for the cache", targets.size()));
      float[][] before = encodeAll(encoder, features, stages);
      NystromProjector old = NystromProjector.fit(rows(before, landmarkIds), 1e-6);
      float[][] cache = new float[before.length][];
      for (int i = 0; i < before.length; i++) {
        cache[i] = old.project(before[i]);
      }

      stages.next(o.steps() + " training steps of " + o.batch() + " between cache and re-encode");
      train(trainer, train, features, index, targets, o.steps(), o.batch(), random, stages);

      // The s' regression samples: the d' landmarks (which must be re-encoded anyway, for the new
      // projection) and s' - d' other targets drawn uniformly. The landmarks stay the same targets
      // from version to version, as in the paper (App. C): the map then moves the cache within one
      // basis instead of into another one it cannot represent.
      int[] sample =
          java.util.stream.IntStream.concat(
                  java.util.Arrays.stream(landmarkIds),
                  random
                      .ints(0, targets.size())
                      .filter(i -> java.util.Arrays.stream(landmarkIds).noneMatch(l -> l == i))
                      .distinct()
                      .limit(o.samples() - o.landmarks()))
              .toArray();

      // Exact: re-encode everything with the new tower and project through the landmarks.
      stages.next(String.format("re-encoding %,d targets exactly", targets.size()));
      long t0 = System.nanoTime();
      float[][] after = encodeAll(encoder, features, stages);
      NystromProjector exactProjector = NystromProjector.fit(rows(after, landmarkIds), 1e-6);
      float[][] exact = new float[after.length][];
      for (int i = 0; i < after.length; i++) {
        exact[i] = exactProjector.project(after[i]);
      }
      double exactSeconds = (System.nanoTime() - t0) / 1e9;

      // Approximate: re-encode the s' samples, fit the map, move every cached vector.
      stages.next(sample.length + " samples re-encoded, the map fitted and applied to the cache");
      long t1 = System.nanoTime();
      List<Features> sampled = new ArrayList<>();
      float[][] oldCache = new float[sample.length][];
      for (int i = 0; i < sample.length; i++) {
        sampled.add(features.get(sample[i]));
        oldCache[i] = cache[sample[i]];
      }
      float[][] sampledNew = encoder.encodeTargets(sampled);
      float[][] landmarkNew = java.util.Arrays.copyOf(sampledNew, o.landmarks());
      ReEncodingRegression.Result fit =
          ReEncodingRegression.fit(oldCache, sampledNew, landmarkNew, 1e-3, 1e-6);
      long t2 = System.nanoTime();
      CacheMap map = fit.map();
      float[] scratch = new float[map.dimension()];
      float[][] moved = new float[cache.length][];
      for (int i = 0; i < cache.length; i++) {
        moved[i] = cache[i].clone();
        map.applyInPlace(moved[i], scratch);
      }
      double approxSeconds = (System.nanoTime() - t1) / 1e9;
      double mapSeconds = (System.nanoTime() - t2) / 1e9;

      // Stale: the cache left as it was (what skipping the update would serve).
      double cosStale = 0;
      for (int i = 0; i < exact.length; i++) {
        cosStale += VectorMath.cosine(cache[i], exact[i]);
      }

      double cosMoved = 0;
      double minMoved = 1;
      for (int i = 0; i < exact.length; i++) {
        double c = VectorMath.cosine(moved[i], exact[i]);
        cosMoved += c;
        minMoved = Math.min(minMoved, c);
      }
      figures.put("tower", o.model().towerKind().id);
      figures.put("trainable_layers", o.model().trainableLayers());
      figures.put("warmup_steps", o.warmupSteps());
      figures.put("targets", targets.size());
      figures.put("encoder_dim", after[0].length);
      figures.put("landmarks", o.landmarks());
      figures.put("samples", o.samples());
      figures.put("steps_between", o.steps());
      figures.put("exact_reencode_s", round(exactSeconds));
      figures.put("approx_reencode_s", round(approxSeconds));
      figures.put("approx_map_apply_s", round(mapSeconds));
      figures.put("speedup", round(exactSeconds / approxSeconds));
      figures.put("mean_cosine", round4(cosMoved / exact.length));
      figures.put("min_cosine", round4(minMoved));
      figures.put("mean_cosine_stale_vs_exact", round4(cosStale / exact.length));
      figures.put(
          "note",
          "exact = encode every target with the new tower + project through the re-encoded"
              + " landmarks; approx = encode the s' samples (the d' landmarks among them), fit the"
              + " regression, apply the map to every cached vector; stale = the cache left as it"
              + " was; featurization excluded from both");
    }
    return figures;
  }

  private static void train(
      DualEncoderTrainer trainer,
      List<LabelledQuery> train,
      List<Features> features,
      Map<String, Integer> index,
      List<TargetText> targets,
      int steps,
      int batch,
      Random random,
      Stages stages) {
    ProgressBar bar = stages.bar("steps", steps);
    for (int s = 0; s < steps; s++) {
      bar.draw(s, "");
      TrainingBatch drawn =
          UniformBatches.draw(
              train, targets, features, index, trainer.encoder(), batch, 64, random);
      try {
        trainer.step(drawn);
      } catch (io.dynnibal.training.SkippedStep e) {
        System.err.println("skipped a batch: " + e.getMessage()); // nothing changed; draw another
      }
    }
    bar.finish(steps, "");
  }

  /** Every target's encoding, in parts of {@value #ENCODE_PART} with a bar of the targets done. */
  private static float[][] encodeAll(DualEncoder encoder, List<Features> features, Stages stages) {
    float[][] out = new float[features.size()][];
    ProgressBar bar = stages.bar("targets", features.size());
    for (int from = 0; from < features.size(); from += ENCODE_PART) {
      bar.draw(from, "");
      List<Features> part = features.subList(from, Math.min(features.size(), from + ENCODE_PART));
      float[][] encoded = encoder.encodeTargets(part);
      System.arraycopy(encoded, 0, out, from, encoded.length);
    }
    bar.finish(features.size(), "");
    return out;
  }

  private static float[][] rows(float[][] all, int[] ids) {
    float[][] out = new float[ids.length][];
    for (int i = 0; i < ids.length; i++) {
      out[i] = all[ids[i]];
    }
    return out;
  }

  private static double round(double v) {
    return Math.round(v * 1000) / 1000.0;
  }

  private static double round4(double v) {
    return Math.round(v * 10000) / 10000.0;
  }
}
