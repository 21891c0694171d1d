package io.dynnibal.bench.cli;

import io.dynnibal.bench.training.SamplerFidelityBenchmark;
import io.dynnibal.cli.options.JsonOutput;
import io.dynnibal.cli.options.JsonlFiles;
import io.dynnibal.data.JsonlCorpus;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.local.Corpus;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.snapshot.ParameterSnapshots;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code dynnibal bench sampler-fidelity}: the MH sampler's fidelity on a trained model. */
@Command(
    name = "sampler-fidelity",
    description = {
      "Measure how faithful DyNNIBAL's MH sampler is to exact sampling on a trained model.",
      "Every target is encoded once into an exact Nystrom cache and one SG tree; per query, k draws for each chain",
      "length and cluster budget, and their fidelity (overlap_topk, logit_ratio, mass_ratio) to exact sampling at",
      "full dimension."
    })
final class SamplerFidelityBenchCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--model",
      required = true,
      description = "A model directory (a parameter snapshot: final/, kept/ or model-N/).")
  Path model;

  @Option(
      names = "--targets",
      description =
          "Targets JSONL (gz or plain; default: the bundled Debian corpus, with its dev queries).")
  Path targets;

  @Option(names = "--queries", description = JsonlFiles.EVAL + " With --targets.")
  Path queries;

  @Option(
      names = "--query-count",
      defaultValue = "200",
      description = "Queries measured (default ${DEFAULT-VALUE}).")
  int queryCount;

  @Option(
      names = "--landmarks",
      defaultValue = "128",
      description = "d' (default ${DEFAULT-VALUE}, the experiment's).")
  int landmarks;

  @Option(
      names = "--per-example",
      defaultValue = "8",
      description = "Draws per query k (default ${DEFAULT-VALUE}).")
  int perExample;

  @Option(
      names = "--chains",
      defaultValue = "8,32",
      split = ",",
      description = "MH chain lengths (default ${DEFAULT-VALUE}).")
  List<Integer> chains;

  @Option(
      names = "--clusters",
      defaultValue = "100,400,1600",
      split = ",",
      description =
          "FindClustering budgets, clusters per query (the job: mh.cluster.share of a shard's"
              + " targets, at most mh.max.clusters) (default ${DEFAULT-VALUE}).")
  List<Integer> clusters;

  @Option(
      names = "--deepest-radii",
      defaultValue = "0.3",
      split = ",",
      description =
          "FindClustering refines clusters near the query down to this radius (the shards use 0.3)"
              + " (default ${DEFAULT-VALUE}).")
  List<Double> radii;

  @Option(
      names = "--exact-inside",
      defaultValue = "0,64",
      split = ",",
      description =
          "The proposal draws exactly inside clusters of at most this many targets, mh.exact.inside"
              + " (0: uniformly inside every cluster) (default ${DEFAULT-VALUE}).")
  List<Integer> exactInside;

  @Option(
      names = "--exact-targets",
      defaultValue = "1024",
      description =
          "With --exact-inside: the heaviest small clusters are weighed by their exact mass until"
              + " they hold this many targets, mh.exact.targets (default ${DEFAULT-VALUE}).")
  int exactTargets;

  @Option(names = "--seed", defaultValue = "1", description = "Seed (default ${DEFAULT-VALUE}).")
  long seed;

  @Mixin JsonOutput json;

  @Override
  public Integer call() throws Exception {
    if ((targets == null) != (queries == null)) {
      throw new ParameterException(spec.commandLine(), "--targets and --queries go together");
    }
    Corpus corpus =
        targets == null
            ? Corpus.bundledDebian()
            : new Corpus(
                targets.getFileName().toString(),
                JsonlCorpus.readTargets(targets),
                List.of(),
                JsonlCorpus.readQueries(queries));
    try (DualEncoder encoder = ParameterSnapshots.readEncoder(model.toUri())) {
      json.print(
          SamplerFidelityBenchmark.run(
              new SamplerFidelityBenchmark.Options(
                  encoder,
                  corpus.targets(),
                  corpus.eval(),
                  queryCount,
                  landmarks,
                  new TrainingJobConfig().index.treeBase,
                  perExample,
                  chains,
                  clusters,
                  radii,
                  exactInside,
                  exactTargets,
                  seed),
              System.err));
    }
    return 0;
  }
}
