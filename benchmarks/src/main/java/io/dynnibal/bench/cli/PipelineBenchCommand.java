package io.dynnibal.bench.cli;

import io.dynnibal.bench.pipeline.PipelineBenchmark;
import io.dynnibal.cli.LocalRunOptions;
import io.dynnibal.cli.options.JsonOutput;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.local.Corpus;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code dynnibal bench pipeline}: the streaming job against its own trainer. */
@Command(
    name = "pipeline",
    description = {
      "Measure how close the streaming job comes to the speed of its own trainer on the same pairs.",
      "The full job (in-process broker, MiniCluster, RocksDB shards) and the trainer alone train on the same pairs,",
      "batch size and negative dose: steps/s of each, their ratio, the trainer's idle share, shard and merge time",
      "per batch, feedback latency of the model updates. The experiment's settings (--config and --set override",
      "them); the bundled Debian corpus unless given."
    })
final class PipelineBenchCommand implements Callable<Integer> {
  @Option(
      names = "--warmup-steps",
      defaultValue = "60",
      description =
          "Steps before the timed window: the first model updates, JIT (default ${DEFAULT-VALUE}).")
  int warmupSteps;

  @Option(
      names = "--steps",
      defaultValue = "240",
      description = "Timed steps (default ${DEFAULT-VALUE}).")
  int steps;

  @Option(
      names = "--tower",
      defaultValue = "bag",
      description = "bag (default) or transformer: the experiment's settings for that tower.")
  String tower;

  @Mixin LocalRunOptions run;

  @Mixin JsonOutput json;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (warmupSteps < 0 || steps < 2) {
      throw new ParameterException(spec.commandLine(), "need --warmup-steps >= 0 and --steps >= 2");
    }
    Corpus corpus = run.corpus(spec.commandLine());
    TrainingJobConfig config = run.config(ExperimentSettings.forTower(tower, spec.commandLine()));
    Path work = run.workDir("dynnibal-bench-pipeline-");
    try {
      json.print(
          PipelineBenchmark.run(
              new PipelineBenchmark.Options(
                  corpus, config, warmupSteps, steps, work, config.job.seed),
              System.err));
    } finally {
      run.cleanUp(work);
    }
    return 0;
  }
}
