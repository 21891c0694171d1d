package io.dynnibal.bench.cli;

import io.dynnibal.bench.index.MiningBenchmark;
import io.dynnibal.cli.JobSettingDefaults;
import io.dynnibal.cli.options.JsonOutput;
import java.util.Arrays;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code dynnibal bench mining}: a shard's mining per query, exact and by the tree, by size. */
@Command(
    name = "mining",
    defaultValueProvider = JobSettingDefaults.class,
    description = {
      "A shard's mining per query and its fidelity to the exact softmax, exact and by the tree, by shard size.",
      "Sample mode, batches of the job's size: brute force (one query at a time, and blocked over float rows), the",
      "exact-cache sampler (blocked over the tree's 8-bit cache) and DyNNIBAL-MH at each cluster budget and the",
      "job's. Synthetic clustered vectors, one JVM, one thread."
    })
final class MiningBenchCommand implements Callable<Integer> {
  @Option(
      names = "--targets",
      split = ",",
      defaultValue = "32768,131072,524288,1048576",
      description = "Targets per shard, one run each (default ${DEFAULT-VALUE}).")
  int[] targets;

  @Option(
      names = "--dim",
      defaultValue = "64",
      description = "Cache dimension d' (default ${DEFAULT-VALUE}).")
  int dim;

  @Option(
      names = "--batch",
      descriptionKey = "batch.size",
      description = "Queries per batch (default ${DEFAULT-VALUE}).")
  int batch;

  @Option(
      names = "--batches",
      defaultValue = "4",
      description = "Timed batches per method, after one warm-up batch (default ${DEFAULT-VALUE}).")
  int batches;

  @Option(
      names = "--negatives",
      descriptionKey = "negatives.per.example",
      description = "Draws per query (default ${DEFAULT-VALUE}).")
  int negatives;

  @Option(
      names = "--budgets",
      split = ",",
      defaultValue = "256,1024,4096,16384",
      description = "MH cluster budgets, besides the job's (default ${DEFAULT-VALUE}).")
  int[] budgets;

  @Option(names = "--beta", descriptionKey = "score.scale", description = "Score scale beta.")
  double beta;

  @Option(names = "--base", descriptionKey = "tree.base", description = "SG tree base b.")
  double base;

  @Option(names = "--chain-length", descriptionKey = "mh.chain.length", description = "MH chain.")
  int chainLength;

  @Option(names = "--exact-inside", descriptionKey = "mh.exact.inside", description = "MH.")
  int exactInside;

  @Option(names = "--exact-targets", descriptionKey = "mh.exact.targets", description = "MH.")
  int exactTargets;

  @Option(
      names = "--cluster-share",
      descriptionKey = "mh.cluster.share",
      description = "The job's budget as a share of the shard.")
  double clusterShare;

  @Option(
      names = "--max-clusters",
      descriptionKey = "mh.max.clusters",
      description = "The job's budget's cap.")
  int maxClusters;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description = "Seed of data, queries and samplers (default ${DEFAULT-VALUE}).")
  long seed;

  @Mixin JsonOutput json;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (Arrays.stream(targets).anyMatch(t -> t < 1)
        || dim < 1
        || batch < 1
        || batches < 1
        || negatives < 1) {
      throw new ParameterException(
          spec.commandLine(), "need targets, dim, batch, batches and negatives >= 1");
    }
    json.print(
        MiningBenchmark.run(
            new MiningBenchmark.Config(
                targets,
                dim,
                batch,
                batches,
                negatives,
                seed,
                beta,
                base,
                chainLength,
                exactInside,
                exactTargets,
                clusterShare,
                maxClusters,
                budgets),
            System.err));
    return 0;
  }
}
