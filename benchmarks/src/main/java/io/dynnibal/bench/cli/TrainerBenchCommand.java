package io.dynnibal.bench.cli;

import io.dynnibal.bench.training.TrainerBenchmark;
import io.dynnibal.bench.training.TransformerTrainerBenchmark;
import io.dynnibal.cli.options.JsonOutput;
import io.dynnibal.cli.options.TrainingFiles;
import io.dynnibal.model.DualEncoderConfig;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code dynnibal bench trainer}: the trainer's speed on a real corpus. */
@Command(
    name = "trainer",
    description = {
      "Measure the trainer's steps/s on a real corpus and the seconds to featurize and encode every target.",
      "A step's batch has sampled + uniform negatives, drawn uniformly here: a step costs the same whichever",
      "targets they are. --tower transformer times the pretrained MiniLM's full path against the fast path's",
      "levers (frozen bottom layers, their cache, length groups, every core) on the same batches."
    })
final class TrainerBenchCommand implements Callable<Integer> {
  @Mixin TrainingFiles files;

  @Option(
      names = "--tower",
      defaultValue = "bag",
      description = "bag (default) or transformer (the bundled MiniLM).")
  String tower;

  @Option(names = "--batch", description = "Queries per step (default 128; transformer 32).")
  Integer batch;

  @Option(names = "--sampled", description = "Sampled negatives (default 64; transformer 0).")
  Integer sampled;

  @Option(names = "--uniform", description = "Uniform negatives (default 64; transformer 32).")
  Integer uniform;

  @Option(names = "--steps", description = "Timed steps (default 200; transformer 20 per path).")
  Integer steps;

  @Option(
      names = "--trainable-layers",
      defaultValue = "2",
      description =
          "Transformer: the fast path's top layers that fine-tune (default ${DEFAULT-VALUE}).")
  int trainableLayers;

  @Option(
      names = "--length-buckets",
      defaultValue = "4",
      description = "Transformer: length groups of the grouped paths (default ${DEFAULT-VALUE}).")
  int lengthBuckets;

  @Option(
      names = "--max-targets",
      defaultValue = "2000",
      description =
          "Transformer: targets the negatives come from and the cache fills with (default"
              + " ${DEFAULT-VALUE}; a step costs the same whatever the corpus).")
  int maxTargets;

  @Option(
      names = "--threads",
      description = "Transformer: the cores of the last path (default: every core).")
  Integer threads;

  @Option(names = "--seed", defaultValue = "1", description = "Seed (default ${DEFAULT-VALUE}).")
  long seed;

  @Mixin JsonOutput json;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    boolean transformer = tower.equals("transformer");
    if (!transformer && !tower.equals("bag")) {
      throw new ParameterException(spec.commandLine(), "--tower is bag or transformer");
    }
    int batch = this.batch != null ? this.batch : transformer ? 32 : 128;
    int sampled = this.sampled != null ? this.sampled : transformer ? 0 : 64;
    int uniform = this.uniform != null ? this.uniform : transformer ? 32 : 64;
    int steps = this.steps != null ? this.steps : transformer ? 20 : 200;
    if (batch < 1 || sampled < 0 || uniform < 0 || steps < 1) {
      throw new ParameterException(
          spec.commandLine(), "need batch >= 1, steps >= 1 and non-negative negatives");
    }
    if (transformer) {
      json.print(
          TransformerTrainerBenchmark.run(
              new TransformerTrainerBenchmark.Options(
                  files.targets(),
                  files.train(),
                  DualEncoderConfig.transformer(null, 0, 32, 16, 0, true, 20f),
                  trainableLayers,
                  lengthBuckets,
                  batch,
                  sampled + uniform,
                  steps,
                  3,
                  maxTargets,
                  threads != null ? threads : Runtime.getRuntime().availableProcessors(),
                  seed),
              System.err));
      return 0;
    }
    json.print(
        TrainerBenchmark.run(
            new TrainerBenchmark.Options(
                files.targets(),
                files.train(),
                DualEncoderConfig.DEFAULT,
                batch,
                sampled,
                uniform,
                steps,
                20,
                seed),
            System.err));
    return 0;
  }
}
