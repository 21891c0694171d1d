package io.dynnibal.bench.cli;

import io.dynnibal.bench.index.ReencodeBenchmark;
import io.dynnibal.cli.options.JsonOutput;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code dynnibal bench reencode}: the approximate re-encoding on synthetic towers. */
@Command(
    name = "reencode",
    description = {
      "Compare the approximate re-encoding of the cache with running the new tower over every target.",
      "Approximate: s' new encodings, the regression and one d' x d' map over the cache; the figure of quality is",
      "the mean cosine of the approximate cache to the true one."
    })
final class ReencodeBenchCommand implements Callable<Integer> {
  @Option(
      names = "--targets",
      defaultValue = "50000",
      description = "Number of targets (default ${DEFAULT-VALUE}).")
  int targets;

  @Option(
      names = "--landmarks",
      defaultValue = "128",
      description = "Nystrom landmarks d' (default ${DEFAULT-VALUE}).")
  int landmarks;

  @Option(
      names = "--samples",
      defaultValue = "4096",
      description = "Regression samples s' (default ${DEFAULT-VALUE}).")
  int samples;

  @Option(
      names = "--drift",
      defaultValue = "0.05",
      description =
          "Relative weight change between the old and new tower (default ${DEFAULT-VALUE}).")
  double drift;

  @Option(names = "--seed", defaultValue = "1", description = "Seed (default ${DEFAULT-VALUE}).")
  long seed;

  @Mixin JsonOutput json;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (landmarks < 1 || samples < landmarks || targets < samples || !(drift >= 0)) {
      throw new ParameterException(
          spec.commandLine(), "need 1 <= landmarks <= samples <= targets and drift >= 0");
    }
    json.print(
        ReencodeBenchmark.run(
            new ReencodeBenchmark.Config(targets, landmarks, samples, drift, seed), System.err));
    return 0;
  }
}
