package io.dynnibal.bench.cli;

import io.dynnibal.bench.experiment.Experiment;
import io.dynnibal.bench.experiment.ExperimentReport;
import io.dynnibal.cli.LocalRunOptions;
import io.dynnibal.cli.options.JsonOutput;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.local.Corpus;
import io.dynnibal.sampler.Samplers;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code dynnibal experiment}: the samplers side by side on one dataset replayed from Kafka. */
@Command(
    name = "experiment",
    description = {
      "Compare the samplers on one dataset replayed from Kafka and print the paper's table (Mem %%, R@k, MRR@10).",
      "The dataset is published once and replayed through the streaming job once per sampler and seed with the same",
      "step budget; every trained model is evaluated exactly. Defaults to the bundled Debian corpus (train -> dev)",
      "and an in-process broker."
    })
final class ExperimentCommand implements Callable<Integer> {
  @Option(
      names = "--samplers",
      split = ",",
      description =
          "Samplers, comma-separated (default: all but"
              + " dynnibal-rejection, which is exact but far too slow at beta = 20 on 64-d Nystrom vectors (see"
              + " docs/experiments.md), and auto, which mines as exact-cache or dynnibal-mh do): "
              + "in-batch, uniform, stochastic-negative-mining, negative-cache, exhaustive, dynnibal-mh, dynnibal-rejection,"
              + " exact-cache, auto, bm25.")
  List<String> samplers = new ArrayList<>(DEFAULT_SAMPLERS);

  static final List<String> DEFAULT_SAMPLERS = Samplers.comparedByDefault();

  @Option(
      names = "--steps",
      required = true,
      description = "Training steps per run (the budget every run gets).")
  long steps;

  @Option(
      names = "--seeds",
      defaultValue = "3",
      description = "Seeds per sampler (default ${DEFAULT-VALUE}).")
  int seeds;

  @Option(
      names = "--curve-points",
      description =
          "Models kept per run for the learning curve (default 4; 1 with --tower transformer, whose"
              + " every curve point encodes the whole corpus).")
  Integer curvePoints;

  @Option(
      names = "--tower",
      defaultValue = "bag",
      description =
          "bag: the hashed-feature tower trained from scratch, with the demo's settings (default);"
              + " transformer: the bundled pretrained MiniLM fine-tuned, with the settings that"
              + " beat BM25 (see docs/experiments.md; --config and --set still override them).")
  String tower;

  @Option(
      names = "--curve-eval-limit",
      defaultValue = "1000",
      description =
          "Evaluation queries per curve point, 0 for all (default ${DEFAULT-VALUE}); the final model is"
              + " always evaluated on all.")
  int curveEvalLimit;

  @Option(
      names = "--max-targets",
      description =
          "Run on at most N targets, the same for every run: those of the evaluation queries first,"
              + " then those training pairs name; only their pairs and queries (default: all).")
  int maxTargets;

  @Option(
      names = "--eval-limit",
      description = "Evaluate on at most N queries, a seeded subset (default: all).")
  int evalLimit;

  @Option(
      names = "--bootstrap",
      description = "HOST:PORT of a Kafka cluster (default: an in-process broker).")
  String bootstrap;

  @picocli.CommandLine.Mixin LocalRunOptions run;

  @picocli.CommandLine.Mixin JsonOutput json;

  @Option(
      names = "--plot",
      description = "Write R@1 against training step per sampler to this PNG file.")
  Path plot;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    List<String> defaults = ExperimentSettings.forTower(tower, spec.commandLine());
    boolean transformer = tower.equals("transformer");
    if (curvePoints == null) {
      curvePoints = transformer ? 1 : 4;
    }
    if (steps < 1 || seeds < 1 || curvePoints < 1) {
      throw new ParameterException(
          spec.commandLine(), "--steps, --seeds and --curve-points must be at least 1");
    }
    for (String s : samplers) {
      if (!Samplers.NAMES.contains(s)) {
        throw new ParameterException(
            spec.commandLine(), "unknown sampler \"" + s + "\"; one of " + Samplers.NAMES);
      }
    }
    TrainingJobConfig config = run.config(defaults);
    Corpus corpus = run.corpus(spec.commandLine()).subset(maxTargets, evalLimit, config.job.seed);
    if (bootstrap != null) {
      config.kafka.bootstrapServers = bootstrap;
    }
    Path work = run.workDir("dynnibal-experiment-");
    try {
      Experiment.Result result =
          Experiment.run(
              new Experiment.Options(
                  corpus,
                  config,
                  samplers,
                  seeds,
                  steps,
                  curvePoints,
                  curveEvalLimit,
                  work,
                  bootstrap),
              System.err);
      System.err.println();
      System.out.print(ExperimentReport.table(result));
      if (json.file() != null) {
        ExperimentReport.writeJson(result, json.file());
        System.err.println("figures written to " + json.file());
      }
      if (plot != null) {
        ExperimentReport.writePlot(result, plot);
        System.err.println("learning curves drawn to " + plot);
      }
      return 0;
    } finally {
      run.cleanUp(work);
    }
  }
}
