package io.dynnibal.cli;

import io.dynnibal.cli.options.JsonOutput;
import io.dynnibal.cli.options.TrainingFiles;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.TowerKind;
import io.dynnibal.model.features.FeatureConfig;
import io.dynnibal.negatives.NegativesPool;
import io.dynnibal.snapshot.ParameterSnapshots;
import io.dynnibal.training.SamplingCorrection;
import io.dynnibal.training.TrainerConfig;
import io.dynnibal.training.local.LocalTraining;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code dynnibal train}: the trainer alone, in this JVM, with in-batch + uniform negatives. */
@Command(
    name = "train",
    defaultValueProvider = JobSettingDefaults.class,
    description = {
      "Train a dual encoder from JSONL files in this JVM (no Kafka, no Flink) with in-batch and uniform negatives.",
      "This is the baseline the index samplers must beat. Prints dev metrics before and after, and JSON figures."
    })
final class TrainCommand implements Callable<Integer> {
  @Mixin TrainingFiles files;

  @Option(names = "--eval", description = "Evaluation queries JSONL (skipped when absent).")
  Path eval;

  @Option(
      names = "--eval-limit",
      defaultValue = "0",
      description = "Evaluate on at most N queries (0: all).")
  int evalLimit;

  @Option(
      names = "--epochs",
      defaultValue = "2",
      description = "Passes over the pairs (default ${DEFAULT-VALUE}).")
  int epochs;

  @Option(
      names = "--max-steps",
      defaultValue = "0",
      description = "Stop after N steps (0: no limit).")
  int maxSteps;

  @Option(
      names = "--max-minutes",
      defaultValue = "0",
      description =
          "Stop once the steps have taken this much wall time (0: no limit); the learning rate"
              + " decays over the steps the time holds at the pace so far, within --epochs and"
              + " --max-steps.")
  double maxMinutes;

  @Option(
      names = "--batch",
      descriptionKey = "batch.size",
      description = "Queries per step (default ${DEFAULT-VALUE}).")
  int batch;

  @Option(
      names = "--uniform-negatives",
      descriptionKey = "negatives.uniform",
      description = "Uniform negatives shared by a batch (default ${DEFAULT-VALUE}).")
  int uniform;

  @Option(
      names = "--negatives-pool",
      descriptionKey = "negatives.pool",
      description =
          "Where uniform negatives come from: all (every target) or positives (every target the"
              + " training pairs name, from the first step; the job's pool grows as batches name"
              + " them) (default ${DEFAULT-VALUE}).")
  String negativesPool;

  @Option(
      names = "--correction",
      descriptionKey = "negatives.correction",
      description =
          "How the loss counts each candidate: logq (its logit less the log of how often the step"
              + " expected to draw it: the candidates estimate the softmax over every target) or"
              + " none (the softmax over the candidates as drawn) (default ${DEFAULT-VALUE}).")
  String correction;

  @Option(
      names = "--unnamed-share",
      descriptionKey = "negatives.unnamed.share",
      description =
          "Under --negatives-pool positives, the weight of a target no pair names in the uniform"
              + " draws, against 1 for a named one (the job admits that share of them per model"
              + " version) (default ${DEFAULT-VALUE}).")
  double unnamedShare;

  @Option(
      names = "--lr",
      descriptionKey = "learning.rate",
      description = "Peak learning rate of the networks (default ${DEFAULT-VALUE}).")
  float learningRate;

  @Option(
      names = "--embedding-lr-factor",
      defaultValue = "10",
      description = "Embedding tables' rate relative to --lr (default ${DEFAULT-VALUE}).")
  float embeddingFactor;

  @Option(
      names = "--warmup",
      descriptionKey = "warmup.steps",
      description = "Warm-up steps (default ${DEFAULT-VALUE}).")
  int warmup;

  @Option(
      names = "--buckets",
      descriptionKey = "model.buckets",
      description = "Hash buckets (default ${DEFAULT-VALUE}).")
  int buckets;

  @Option(
      names = "--embedding-dim",
      descriptionKey = "model.embedding.dim",
      description = "Embedding table width (default ${DEFAULT-VALUE}).")
  int embeddingDim;

  @Option(
      names = "--hidden-dim",
      descriptionKey = "model.hidden.dim",
      description = "Hidden layer width (default ${DEFAULT-VALUE}).")
  int hiddenDim;

  @Option(
      names = "--output-dim",
      descriptionKey = "model.output.dim",
      description = "Embedding size d (default ${DEFAULT-VALUE}).")
  int outputDim;

  @Option(names = "--separate-towers", description = "One tower per side instead of a shared one.")
  boolean separateTowers;

  @Option(
      names = "--tower",
      descriptionKey = "model.tower",
      description =
          "Tower kind: bag (bag of features -> MLP, default), set-transformer (self-attention over the"
              + " strongest features) or transformer (fine-tunes a pretrained BERT-family encoder;"
              + " --lr defaults to 5e-5 and --embedding-lr-factor to 1 for it).")
  String tower;

  @Option(
      names = "--max-tokens",
      descriptionKey = "model.max.tokens",
      description =
          "Features a set-transformer reads, or a transformer's tokens per text (default"
              + " ${DEFAULT-VALUE}).")
  int maxTokens;

  @Option(
      names = "--query-max-tokens",
      descriptionKey = "model.query.max.tokens",
      description = "A transformer's tokens per query (0: --max-tokens; default ${DEFAULT-VALUE}).")
  int queryMaxTokens;

  @Option(
      names = "--trainable-layers",
      descriptionKey = "model.trainable.layers",
      description =
          "A transformer's top layers that fine-tune; the rest and the embeddings stay frozen (0:"
              + " all; default ${DEFAULT-VALUE}).")
  int trainableLayers;

  @Option(
      names = "--frozen-cache-mb",
      descriptionKey = "model.frozen.cache.mb",
      description =
          "With --trainable-layers: MiB of the frozen layers' output per text to keep, so a text"
              + " seen again runs only the trainable layers (0: no cache; default ${DEFAULT-VALUE}).")
  int frozenCacheMb;

  @Option(
      names = "--length-buckets",
      descriptionKey = "model.length.buckets",
      description =
          "A transformer step's texts run in N groups of similar length (default ${DEFAULT-VALUE}).")
  int lengthBuckets;

  @Option(
      names = "--checkpoint",
      descriptionKey = "model.checkpoint",
      description =
          "A transformer's weights: all-minilm-l6-v2 (bundled) or a Hugging Face directory (default"
              + " ${DEFAULT-VALUE}).")
  String checkpoint;

  @Option(
      names = "--max-targets",
      defaultValue = "0",
      description =
          "Keep at most N targets (0: all): the evaluation queries' targets first, then the training"
              + " pairs', then the rest, in a seeded order. For towers too slow to encode a whole"
              + " corpus.")
  int maxTargets;

  @Spec CommandSpec spec;

  @Option(
      names = "--beta",
      descriptionKey = "score.scale",
      description = "Score scale (default ${DEFAULT-VALUE}).")
  float beta;

  @Option(
      names = "--seed",
      descriptionKey = "seed",
      description = "Seed of parameters and batches (default ${DEFAULT-VALUE}).")
  long seed;

  @Option(
      names = "--snapshot-dir",
      description = "Write the trained model (with optimiser state) under this directory.")
  String snapshotDir;

  @Mixin JsonOutput json;

  @Override
  public Integer call() throws Exception {
    FeatureConfig features = FeatureConfig.DEFAULT;
    features =
        new FeatureConfig(
            buckets,
            features.maxWords(),
            features.charNgramWords(),
            features.minCharN(),
            features.maxCharN());
    DualEncoderConfig model =
        new DualEncoderConfig(
            features,
            embeddingDim,
            hiddenDim,
            outputDim,
            !separateTowers,
            beta,
            TowerKind.of(tower),
            maxTokens,
            checkpoint,
            null,
            queryMaxTokens,
            trainableLayers,
            new io.dynnibal.model.transformer.FastPath(frozenCacheMb, true, lengthBuckets));
    boolean transformer = model.towerKind() == TowerKind.TRANSFORMER;
    var parsed = spec.commandLine().getParseResult();
    if (transformer && !parsed.hasMatchedOption("--lr")) {
      learningRate = 5e-5f; // fine-tuning: the bag tower's rate would wreck pretrained weights
    }
    if (transformer && !parsed.hasMatchedOption("--embedding-lr-factor")) {
      embeddingFactor = TrainerConfig.embeddingRateFactor(model.towerKind());
    }
    LocalTraining.Options options =
        new LocalTraining.Options(
            files.targets(),
            files.train(),
            eval,
            epochs,
            maxSteps,
            maxMinutes,
            batch,
            uniform,
            pool(),
            unnamedShare,
            correction(),
            seed,
            model,
            learningRate,
            embeddingFactor,
            warmup,
            evalLimit,
            snapshotDir == null ? null : ParameterSnapshots.parse(snapshotDir),
            maxTargets);
    LocalTraining.Result result = LocalTraining.run(options, System.err);
    if (result.before() != null) {
      List<MetricsTable.Row> rows = new ArrayList<>();
      rows.add(new MetricsTable.Row("untrained", result.before()));
      rows.add(new MetricsTable.Row("trained", result.after()));
      rows.add(new MetricsTable.Row("BM25", result.bm25()));
      System.err.print(MetricsTable.render(rows));
    }
    Map<String, Object> figures = new LinkedHashMap<>();
    figures.put("device", result.device());
    figures.put("steps", result.steps());
    figures.put("train_pairs", result.trainPairs());
    figures.put("skipped_pairs_unknown_target", result.skippedPairs());
    figures.put("train_seconds", Math.round(result.trainSeconds() * 10) / 10.0);
    figures.put("steps_per_s", Math.round(result.stepsPerSecond() * 100) / 100.0);
    figures.put("loss_first", result.firstLoss());
    figures.put("loss_last", result.lastLoss());
    figures.put("skipped_steps", result.skippedSteps());
    if (result.after() != null) {
      result.before().figures().forEach((k, v) -> figures.put("before_" + k, v));
      result.after().figures().forEach((k, v) -> figures.put("after_" + k, v));
      result.bm25().figures().forEach((k, v) -> figures.put("bm25_" + k, v));
    }
    if (result.snapshot() != null) {
      figures.put("snapshot", result.snapshot().toString());
    }
    json.print(figures);
    return 0;
  }

  private SamplingCorrection.Mode correction() {
    try {
      return SamplingCorrection.Mode.of(correction);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  private NegativesPool pool() {
    NegativesPool pool;
    try {
      pool = NegativesPool.of(negativesPool);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
    if (unnamedShare != 0 && pool != NegativesPool.POSITIVES) {
      throw new ParameterException(
          spec.commandLine(),
          "--unnamed-share applies to --negatives-pool positives (under all every target is"
              + " drawn alike)");
    }
    return pool;
  }
}
