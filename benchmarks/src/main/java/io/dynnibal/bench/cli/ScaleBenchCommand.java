package io.dynnibal.bench.cli;

import io.dynnibal.bench.scale.ScaleBenchmark;
import io.dynnibal.cli.JobSettingsOptions;
import io.dynnibal.cli.options.JsonOutput;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.snapshot.Directories;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code dynnibal bench scale}: N synthetic targets through the real job on this machine. */
@Command(
    name = "scale",
    description = {
      "Run N synthetic targets through the real job on this machine and measure what they cost.",
      "Texts are shaped like the bundled Debian corpus; the job runs on an in-process broker, a MiniCluster and",
      "RocksDB: indexing rate, heap and RocksDB bytes per target, steps/s, checkpoint size, and a restore (cancel,",
      "resume from the checkpoint, first step) with the shards' tree rebuild time. The job's settings (--config and",
      "--set override them)."
    })
final class ScaleBenchCommand implements Callable<Integer> {
  @Option(
      names = "--targets",
      defaultValue = "1000000",
      description = "Synthetic targets (default ${DEFAULT-VALUE}).")
  int targets;

  @Option(
      names = "--warmup-steps",
      defaultValue = "20",
      description = "Steps before the timed window (default ${DEFAULT-VALUE}).")
  int warmupSteps;

  @Option(
      names = "--steps",
      defaultValue = "60",
      description = "Timed steps (default ${DEFAULT-VALUE}).")
  int steps;

  @Mixin JobSettingsOptions settings;

  @Option(
      names = "--work-dir",
      description =
          "Where the broker, checkpoints and snapshots live (default: a temporary directory,"
              + " deleted afterwards).")
  Path workDir;

  @Mixin JsonOutput json;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (targets < 1 || warmupSteps < 0 || steps < 2) {
      throw new ParameterException(
          spec.commandLine(), "need --targets >= 1, --warmup-steps >= 0 and --steps >= 2");
    }
    TrainingJobConfig config = settings.config(List.of());
    Path work = workDir != null ? workDir : Files.createTempDirectory("dynnibal-bench-scale-");
    try {
      json.print(
          ScaleBenchmark.run(
              new ScaleBenchmark.Options(
                  targets, config, warmupSteps, steps, work, config.job.seed),
              System.err));
    } finally {
      if (workDir == null) {
        Directories.deleteRecursively(work);
      }
    }
    return 0;
  }
}
