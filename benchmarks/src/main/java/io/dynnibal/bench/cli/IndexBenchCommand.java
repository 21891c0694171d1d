package io.dynnibal.bench.cli;

import io.dynnibal.bench.index.IndexBenchmark;
import io.dynnibal.cli.JobSettingDefaults;
import io.dynnibal.cli.options.JsonOutput;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code dynnibal bench index}: the practical sampler against brute-force top-K. */
@Command(
    name = "index",
    defaultValueProvider = JobSettingDefaults.class,
    description = {
      "Compare the practical DyNNIBAL sampler with brute-force top-K on synthetic clustered vectors.",
      "Same JVM, same vectors, one thread each; the TV distance to the softmax is exact (no sampling noise) for up",
      "to 100,000 targets."
    })
final class IndexBenchCommand implements Callable<Integer> {
  @Option(
      names = "--targets",
      defaultValue = "100000",
      description = "Number of targets (default ${DEFAULT-VALUE}).")
  int targets;

  @Option(
      names = "--dim",
      defaultValue = "128",
      description = "Vector dimension d' (default ${DEFAULT-VALUE}).")
  int dim;

  @Option(
      names = "--queries",
      defaultValue = "200",
      description = "Timed queries (default ${DEFAULT-VALUE}).")
  int queries;

  @Option(
      names = "--negatives",
      defaultValue = "64",
      description = "K negatives per query (default ${DEFAULT-VALUE}).")
  int negatives;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description = "Seed of data, queries and sampler (default ${DEFAULT-VALUE}).")
  long seed;

  @Option(
      names = "--base",
      descriptionKey = "tree.base",
      description = "SG tree base b (default ${DEFAULT-VALUE}).")
  double base;

  @Option(
      names = "--candidates",
      descriptionKey = "mh.candidates.per.negative",
      description =
          "The proposal keeps the closest clusters holding this many targets per negative (default ${DEFAULT-VALUE}).")
  int candidates;

  @Option(
      names = "--max-clusters",
      defaultValue = "300",
      description = "FindClustering's cap (default ${DEFAULT-VALUE}).")
  int maxClusters;

  @Mixin JsonOutput json;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (targets < 1 || dim < 1 || queries < 1 || negatives < 1 || negatives > targets) {
      throw new ParameterException(
          spec.commandLine(), "need targets, dim, queries >= 1 and 1 <= negatives <= targets");
    }
    IndexBenchmark.Config defaults =
        IndexBenchmark.Config.defaults(targets, dim, queries, negatives, seed);
    IndexBenchmark.Config config =
        new IndexBenchmark.Config(
            targets,
            dim,
            queries,
            negatives,
            seed,
            base,
            defaults.beta(),
            defaults.gamma(),
            defaults.deepestRadius(),
            maxClusters,
            candidates,
            defaults.chainLength());
    json.print(IndexBenchmark.run(config, System.err));
    return 0;
  }
}
