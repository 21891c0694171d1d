package io.dynnibal.bench.training;

import io.dynnibal.bench.Stages;
import io.dynnibal.data.JsonlCorpus;
import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.Features;
import io.dynnibal.training.DualEncoderTrainer;
import io.dynnibal.training.ProgressBar;
import io.dynnibal.training.StepResult;
import io.dynnibal.training.TrainerConfig;
import io.dynnibal.training.TrainingBatch;
import io.dynnibal.training.local.UniformBatches;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The trainer's speed on a real corpus: steps/s at a given batch with shared negatives, and the
 * time to featurize and encode every target (what evaluation and a full re-encode cost). The
 * "sampled" negatives are drawn uniformly here - an index would choose harder ones, but a step
 * costs the same either way.
 */
public final class TrainerBenchmark {
  private TrainerBenchmark() {}

  public record Options(
      Path targets,
      Path train,
      DualEncoderConfig model,
      int batch,
      int sampledNegatives,
      int uniformNegatives,
      int steps,
      int warmupSteps,
      long seed) {}

  /**
   * Runs the benchmark and returns its figures (progress null: quietly), showing each stage and the
   * steps on {@code progress}.
   */
  public static Map<String, Object> run(Options options, PrintStream progress) {
    Stages stages = new Stages(progress, "trainer", 3);
    List<TargetText> targets = JsonlCorpus.readTargets(options.targets());
    List<LabelledQuery> train = JsonlCorpus.readQueries(options.train());
    Map<String, Object> figures = new LinkedHashMap<>();
    try (DualEncoder encoder = DualEncoder.create(options.model(), options.seed())) {
      figures.put("device", encoder.device().toString());
      figures.put("targets", targets.size());
      stages.next(String.format("featurizing and encoding %,d targets", targets.size()));
      long t0 = System.nanoTime();
      List<Features> targetFeatures = new ArrayList<>(targets.size());
      Map<String, Integer> index = new HashMap<>();
      long featureCount = 0;
      for (int i = 0; i < targets.size(); i++) {
        Features f = encoder.featurizeTarget(targets.get(i).text());
        featureCount += f.size();
        targetFeatures.add(f);
        index.put(targets.get(i).targetId(), i);
      }
      double featurizeSeconds = (System.nanoTime() - t0) / 1e9;
      encoder.encodeTargets(
          targetFeatures.subList(0, Math.min(2048, targetFeatures.size()))); // warm up
      long t1 = System.nanoTime();
      encoder.encodeTargets(targetFeatures);
      double encodeSeconds = (System.nanoTime() - t1) / 1e9;
      figures.put("featurize_all_targets_s", round(featurizeSeconds));
      figures.put("encode_all_targets_s", round(encodeSeconds));
      figures.put("featurize_and_encode_all_targets_s", round(featurizeSeconds + encodeSeconds));
      figures.put("mean_features_per_target", round((double) featureCount / targets.size()));

      DualEncoderTrainer trainer =
          new DualEncoderTrainer(encoder, TrainerConfig.fromScratch(100, 0));
      Random random = new Random(options.seed());
      int negatives = options.sampledNegatives() + options.uniformNegatives();
      double[] millis = new double[options.steps()];
      long rows = 0;
      int total = options.warmupSteps() + options.steps();
      stages.next(
          options.warmupSteps()
              + " warm-up and "
              + options.steps()
              + " timed steps of "
              + options.batch());
      ProgressBar bar = stages.bar("steps", total);
      for (int s = 0; s < total; s++) {
        bar.draw(s, s < options.warmupSteps() ? "warm-up" : "timed");
        TrainingBatch batch =
            UniformBatches.draw(
                train, targets, targetFeatures, index, encoder, options.batch(), negatives, random);
        StepResult result = trainer.step(batch);
        if (s >= options.warmupSteps()) {
          millis[s - options.warmupSteps()] = result.millis();
          rows += result.embeddingRowsUpdated();
        }
      }
      bar.finish(total, "");
      stages.next("figures");
      double timedMillis = Arrays.stream(millis).sum();
      Arrays.sort(millis);
      figures.put("batch", options.batch());
      figures.put("sampled_negatives", options.sampledNegatives());
      figures.put("uniform_negatives", options.uniformNegatives());
      figures.put("steps_timed", options.steps());
      figures.put("steps_per_s", round(options.steps() / (timedMillis / 1000)));
      figures.put("step_ms_p50", round(millis[millis.length / 2]));
      figures.put("step_ms_p95", round(millis[(int) (millis.length * 0.95)]));
      figures.put("embedding_rows_updated_per_step", rows / options.steps());
      Runtime runtime = Runtime.getRuntime();
      long tableBytes = 0;
      for (var tower : encoder.distinctTowers()) {
        tableBytes += 3L * tower.table().values().length * Float.BYTES; // values + Adam moments
      }
      figures.put("embedding_tables_with_adam_mb", tableBytes >> 20);
      figures.put("jvm_heap_used_mb", (runtime.totalMemory() - runtime.freeMemory()) >> 20);
    }
    return figures;
  }

  private static double round(double v) {
    return Math.round(v * 100) / 100.0;
  }
}
