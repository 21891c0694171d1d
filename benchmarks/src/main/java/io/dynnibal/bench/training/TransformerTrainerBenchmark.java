package io.dynnibal.bench.training;

import io.dynnibal.bench.Stages;
import io.dynnibal.data.JsonlCorpus;
import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.TorchRuntime;
import io.dynnibal.model.features.Features;
import io.dynnibal.model.transformer.FastPath;
import io.dynnibal.model.transformer.FrozenPrefixCache;
import io.dynnibal.model.transformer.FrozenPrefixCaches;
import io.dynnibal.training.DualEncoderTrainer;
import io.dynnibal.training.ProgressBar;
import io.dynnibal.training.TrainerConfig;
import io.dynnibal.training.TrainingBatch;
import io.dynnibal.training.local.LocalTraining;
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
 * A transformer trainer's speed, path against path in one run: the full path (every layer and the
 * embeddings fine-tune, one thread) and the fast path's levers added one at a time (frozen bottom
 * layers, their cache, length groups, every core), each on the same batches. Each row first encodes
 * every target (filling its own cache, which starts empty), then trains: encoding speed is measured
 * for that first pass and again through the filled cache (what evaluation and exact re-encoding
 * cost once the cache is warm). Training queries go through the cache too, so its hit rate grows as
 * pairs repeat. The last row encodes each batch's queries before its step, untimed, as the job's
 * shards do when they mine for it: in one JVM the trainer then finds the queries' frozen states in
 * the cache the shards filled.
 */
public final class TransformerTrainerBenchmark {
  private TransformerTrainerBenchmark() {}

  /**
   * @param model the full path's encoder (its trainable layers and fast path are replaced per row)
   * @param trainableLayers the fast path's top layers that fine-tune
   * @param maxTargets the targets the negatives and the cache are drawn from (0: all)
   * @param threads the cores the last row uses
   */
  public record Options(
      Path targets,
      Path train,
      DualEncoderConfig model,
      int trainableLayers,
      int lengthBuckets,
      int batch,
      int negatives,
      int steps,
      int warmupSteps,
      int maxTargets,
      int threads,
      long seed) {}

  /**
   * One row: an encoder set-up, the threads it runs on, and whether each batch's queries are
   * encoded (untimed) before its step.
   */
  private record Variant(
      String name, int trainableLayers, FastPath path, int threads, boolean queriesFirst) {
    Variant(String name, int trainableLayers, FastPath path, int threads) {
      this(name, trainableLayers, path, threads, false);
    }
  }

  public static Map<String, Object> run(Options o, PrintStream progress) {
    List<TargetText> targets = JsonlCorpus.readTargets(o.targets());
    List<LabelledQuery> train = JsonlCorpus.readQueries(o.train());
    if (o.maxTargets() > 0 && o.maxTargets() < targets.size()) {
      targets = LocalTraining.subset(targets, null, train, o.maxTargets(), o.seed());
    }
    FastPath cache = new FastPath(16_384, true, 1);
    FastPath grouped = new FastPath(16_384, true, o.lengthBuckets());
    int n = o.trainableLayers();
    List<Variant> variants =
        List.of(
            new Variant("full", 0, FastPath.OFF, 1),
            new Variant("top_" + n + "_layers", n, FastPath.OFF, 1),
            new Variant("top_" + n + "_layers_cached", n, cache, 1),
            new Variant("top_" + n + "_layers_cached_grouped", n, grouped, 1),
            new Variant("top_" + n + "_layers_cached_grouped_threads", n, grouped, o.threads()),
            new Variant(
                "top_" + n + "_layers_cached_grouped_threads_queries_encoded_first",
                n,
                grouped,
                o.threads(),
                true));
    Stages stages = new Stages(progress, "trainer (transformer)", variants.size() + 1);
    Map<String, Object> figures = new LinkedHashMap<>();
    figures.put("targets", targets.size());
    figures.put("batch", o.batch());
    figures.put("negatives_per_step", o.negatives());
    figures.put("target_tokens", o.model().maxTokens());
    figures.put("query_tokens", o.model().queryMaxTokens());
    figures.put("steps_timed", o.steps());
    Map<String, Object> rows = new LinkedHashMap<>();
    double fullStepsPerSecond = 0;
    for (Variant v : variants) {
      stages.next(v.name());
      DualEncoderConfig config =
          new DualEncoderConfig(
              o.model().features(),
              o.model().embeddingDim(),
              o.model().hiddenDim(),
              o.model().outputDim(),
              o.model().sharedTowers(),
              o.model().scoreScale(),
              o.model().towerKind(),
              o.model().maxTokens(),
              o.model().checkpoint(),
              o.model().bert(),
              o.model().queryMaxTokens(),
              v.trainableLayers(),
              v.path());
      Map<String, Object> row = measure(config, v, targets, train, o, stages);
      double stepsPerSecond = (double) row.get("steps_per_s");
      if (v.trainableLayers() == 0) {
        fullStepsPerSecond = stepsPerSecond;
      }
      row.put("speedup", round(stepsPerSecond / fullStepsPerSecond));
      rows.put(v.name(), row);
    }
    figures.put("paths", rows);
    stages.next("done");
    return figures;
  }

  private static Map<String, Object> measure(
      DualEncoderConfig config,
      Variant variant,
      List<TargetText> targets,
      List<LabelledQuery> train,
      Options o,
      Stages stages) {
    Map<String, Object> row = new LinkedHashMap<>();
    int threads = variant.threads();
    int previousThreads = TorchRuntime.useIntraOpThreads(threads);
    FrozenPrefixCaches.forgetAll(); // every cached row starts empty and fills it the same way
    try (DualEncoder encoder = DualEncoder.create(config, o.seed())) {
      row.put("trainable_layers", config.trainableLayers());
      row.put("threads", threads);
      row.put("queries_encoded_first", variant.queriesFirst());
      List<Features> features = new ArrayList<>(targets.size());
      Map<String, Integer> index = new HashMap<>();
      for (int i = 0; i < targets.size(); i++) {
        features.add(encoder.featurizeTarget(targets.get(i).text()));
        index.put(targets.get(i).targetId(), i);
      }
      long t0 = System.nanoTime();
      encoder.encodeTargets(features, threads);
      double firstSeconds = (System.nanoTime() - t0) / 1e9;
      row.put("encode_texts_per_s", round(targets.size() / firstSeconds));
      FrozenPrefixCache cache = encoder.targetTower().frozenPrefixCache();
      if (cache != null) {
        long t1 = System.nanoTime();
        encoder.encodeTargets(features, threads);
        row.put(
            "encode_cached_texts_per_s", round(targets.size() / ((System.nanoTime() - t1) / 1e9)));
        row.put("cache_bytes_per_target", cache.bytes() / Math.max(1, cache.size()));
      }
      DualEncoderTrainer trainer = new DualEncoderTrainer(encoder, TrainerConfig.fineTuning());
      Random random = new Random(o.seed());
      int total = o.warmupSteps() + o.steps();
      double[] millis = new double[o.steps()];
      float lastLoss = 0;
      ProgressBar bar = stages.bar("steps", total);
      for (int s = 0; s < total; s++) {
        bar.draw(s, s < o.warmupSteps() ? "warm-up" : "timed");
        TrainingBatch batch =
            UniformBatches.draw(
                train, targets, features, index, encoder, o.batch(), o.negatives(), random);
        if (variant.queriesFirst()) {
          encoder.encodeQueries(batch.queries()); // the shards' share of the work, untimed
        }
        var result = trainer.step(batch);
        lastLoss = result.loss();
        if (s >= o.warmupSteps()) {
          millis[s - o.warmupSteps()] = result.millis();
        }
      }
      bar.finish(total, "");
      double timed = Arrays.stream(millis).sum();
      Arrays.sort(millis);
      row.put("steps_per_s", round(o.steps() / (timed / 1000)));
      row.put("step_ms_p50", round(millis[millis.length / 2]));
      row.put("last_loss", round(lastLoss));
      if (cache != null) {
        row.put("cache_texts", cache.size());
        row.put(
            "cache_hit_rate",
            round(cache.hits() / (double) Math.max(1, cache.hits() + cache.misses())));
      }
    } finally {
      TorchRuntime.useIntraOpThreads(previousThreads);
    }
    return row;
  }

  private static double round(double v) {
    return Math.round(v * 1000) / 1000.0;
  }
}
