package io.dynnibal.bench.cli;

import io.dynnibal.bench.training.TrainerBenchmark;
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
      "targets they are."
    })
final class TrainerBenchCommand implements Callable<Integer> {
  @Mixin TrainingFiles files;

  @Option(
      names = "--batch",
      defaultValue = "128",
      description = "Queries per step (default ${DEFAULT-VALUE}).")
  int batch;

  @Option(
      names = "--sampled",
      defaultValue = "64",
      description = "Sampled negatives (default ${DEFAULT-VALUE}).")
  int sampled;

  @Option(
      names = "--uniform",
      defaultValue = "64",
      description = "Uniform negatives (default ${DEFAULT-VALUE}).")
  int uniform;

  @Option(
      names = "--steps",
      defaultValue = "200",
      description = "Timed steps (default ${DEFAULT-VALUE}).")
  int steps;

  @Option(names = "--seed", defaultValue = "1", description = "Seed (default ${DEFAULT-VALUE}).")
  long seed;

  @Mixin JsonOutput json;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (batch < 1 || sampled < 0 || uniform < 0 || steps < 1) {
      throw new ParameterException(
          spec.commandLine(), "need batch >= 1, steps >= 1 and non-negative negatives");
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
