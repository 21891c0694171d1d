package io.dynnibal.jobs.cli;

import io.dynnibal.index.bench.IndexBenchmark;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code dynnibal bench ...}: benchmarks that print JSON figures. Never tests: timings belong here. */
@Command(
    name = "bench",
    description = "Benchmarks of the index, sampler and tree maintenance; each prints one JSON object.",
    subcommands = {BenchCommand.Index.class})
final class BenchCommand implements Runnable {
  @Spec CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(spec.commandLine(), "Missing a benchmark: index or maintenance.");
  }

  @Command(
      name = "index",
      description = {
        "The practical DyNNIBAL sampler vs brute-force top-K on synthetic clustered unit vectors,",
        "same JVM, same vectors, one thread each. TV distance to the softmax (exact, no sampling noise)",
        "for up to 100,000 targets."
      })
  static final class Index implements Callable<Integer> {
    @Option(names = "--targets", defaultValue = "100000", description = "Number of targets (default ${DEFAULT-VALUE}).")
    int targets;

    @Option(names = "--dim", defaultValue = "128", description = "Vector dimension d' (default ${DEFAULT-VALUE}).")
    int dim;

    @Option(names = "--queries", defaultValue = "200", description = "Timed queries (default ${DEFAULT-VALUE}).")
    int queries;

    @Option(names = "--negatives", defaultValue = "64", description = "K negatives per query (default ${DEFAULT-VALUE}).")
    int negatives;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of data, queries and sampler (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--base", defaultValue = "1.3", description = "SG tree base b (default ${DEFAULT-VALUE}).")
    double base;

    @Option(names = "--candidates", defaultValue = "8",
        description = "The proposal keeps the closest clusters holding this many targets per negative (default ${DEFAULT-VALUE}).")
    int candidates;

    @Option(names = "--max-clusters", defaultValue = "300", description = "FindClustering's cap (default ${DEFAULT-VALUE}).")
    int maxClusters;

    @Option(names = "--json", description = "Also write the JSON to this file.")
    Path json;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      if (targets < 1 || dim < 1 || queries < 1 || negatives < 1 || negatives > targets) {
        throw new ParameterException(spec.commandLine(),
            "need targets, dim, queries >= 1 and 1 <= negatives <= targets");
      }
      IndexBenchmark.Config defaults = IndexBenchmark.Config.defaults(targets, dim, queries, negatives, seed);
      IndexBenchmark.Config config = new IndexBenchmark.Config(targets, dim, queries, negatives, seed, base,
          defaults.beta(), defaults.gamma(), defaults.deepestRadius(), maxClusters, candidates,
          defaults.chainLength());
      Map<String, Object> figures = IndexBenchmark.run(config);
      String out = IndexBenchmark.toJson(figures);
      System.out.println(out);
      if (json != null) {
        Files.writeString(json, out + System.lineSeparator());
      }
      return 0;
    }
  }
}
