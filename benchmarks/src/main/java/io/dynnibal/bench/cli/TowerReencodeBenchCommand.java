package io.dynnibal.bench.cli;

import io.dynnibal.bench.training.TowerReencodeBenchmark;
import io.dynnibal.cli.JobSettingDefaults;
import io.dynnibal.cli.options.JsonOutput;
import io.dynnibal.cli.options.TrainingFiles;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.TowerKind;
import io.dynnibal.model.transformer.FastPath;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code dynnibal bench tower-reencode}: the approximate re-encoding with the real DJL tower. The
 * sizes a user leaves out fit the tower chosen: the job's defaults for the bag tower, the
 * experiment's transformer settings ({@link ExperimentSettings#transformer}) and a short warm-up
 * for the transformer, whose steps take seconds on a CPU.
 */
@Command(
    name = "tower-reencode",
    defaultValueProvider = JobSettingDefaults.class,
    description = {
      "Compare the approximate re-encoding with exact re-encoding, with the real DJL tower on a corpus.",
      "After --steps training steps every cached vector moves by one d' x d' map fitted on --samples re-encoded",
      "targets, against re-encoding every target exactly."
    })
final class TowerReencodeBenchCommand implements Callable<Integer> {
  /** Warm-up steps before the cache is built, per tower, when --warmup-steps is not given. */
  static final int BAG_WARMUP_STEPS = 200;

  static final int TRANSFORMER_WARMUP_STEPS = 20;

  @Mixin TrainingFiles files;

  @Option(
      names = "--warmup-steps",
      description =
          "Steps before the cache is built (default: "
              + BAG_WARMUP_STEPS
              + " with the bag tower, "
              + TRANSFORMER_WARMUP_STEPS
              + " with the transformer).")
  Integer warmupSteps;

  @Option(
      names = "--steps",
      description =
          "Steps between cache and re-encode, w (default: the setting reencode.every, the"
              + " experiment's with the transformer).")
  Integer steps;

  @Option(
      names = "--landmarks",
      description = "d' (default: the setting landmarks, the experiment's with the transformer).")
  Integer landmarks;

  @Option(
      names = "--samples",
      description =
          "s' (default: the setting regression.samples, the experiment's with the transformer).")
  Integer samples;

  @Option(
      names = "--batch",
      description =
          "Batch (default: the setting batch.size, the experiment's with the transformer).")
  Integer batch;

  @Option(names = "--seed", defaultValue = "1", description = "Seed (default ${DEFAULT-VALUE}).")
  long seed;

  @Option(
      names = "--tower",
      defaultValue = "bag",
      description =
          "bag (the default model) or transformer (the pretrained checkpoint, fine-tuned at 5e-5)"
              + " (default ${DEFAULT-VALUE}).")
  String tower;

  @Option(
      names = "--checkpoint",
      descriptionKey = "model.checkpoint",
      description = "A transformer's weights (default ${DEFAULT-VALUE}).")
  String checkpoint;

  @Option(
      names = "--max-tokens",
      description =
          "A transformer's tokens per text (default: the experiment's transformer setting"
              + " model.max.tokens).")
  Integer maxTokens;

  @Option(
      names = "--trainable-layers",
      defaultValue = "0",
      description =
          "A transformer's top layers that fine-tune; the rest and the embeddings stay frozen (0:"
              + " all; default ${DEFAULT-VALUE}).")
  int trainableLayers;

  @Option(
      names = "--frozen-cache-mb",
      defaultValue = "0",
      description =
          "With --trainable-layers: cache the frozen layers' output per text (MiB), so that exact"
              + " re-encoding runs only the trainable layers (0: no cache; default ${DEFAULT-VALUE}).")
  int frozenCacheMb;

  @Option(
      names = "--max-targets",
      defaultValue = "0",
      description = "Use at most N targets, those of training pairs first (0: all).")
  int maxTargets;

  @Mixin JsonOutput json;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    json.print(TowerReencodeBenchmark.run(options(), System.err));
    return 0;
  }

  /** The benchmark's options: what the user gave, the tower's sizes for the rest. */
  TowerReencodeBenchmark.Options options() throws IOException {
    boolean transformer = TowerKind.of(tower) == TowerKind.TRANSFORMER;
    TrainingJobConfig sizes =
        TrainingJobConfig.load(null, transformer ? ExperimentSettings.transformer() : List.of());
    int warmup = or(warmupSteps, transformer ? TRANSFORMER_WARMUP_STEPS : BAG_WARMUP_STEPS);
    if (warmup < 0) {
      throw new ParameterException(spec.commandLine(), "--warmup-steps must be at least 0");
    }
    int tokens = or(maxTokens, sizes.model.modelMaxTokens);
    DualEncoderConfig model =
        transformer
            ? DualEncoderConfig.transformer(checkpoint, 0, tokens, 0, trainableLayers, true, 20f)
                .withFastPath(new FastPath(frozenCacheMb, true, 1))
            : DualEncoderConfig.DEFAULT;
    return new TowerReencodeBenchmark.Options(
        files.targets(),
        files.train(),
        warmup,
        or(steps, sizes.reencode.reencodeEvery),
        or(landmarks, sizes.index.landmarks),
        or(samples, sizes.reencode.regressionSamples),
        or(batch, sizes.training.batchSize),
        seed,
        model,
        maxTargets);
  }

  private static int or(Integer given, int otherwise) {
    return given != null ? given : otherwise;
  }
}
