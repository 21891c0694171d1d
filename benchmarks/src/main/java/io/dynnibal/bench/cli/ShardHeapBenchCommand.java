package io.dynnibal.bench.cli;

import io.dynnibal.bench.state.ShardHeapBenchmark;
import io.dynnibal.cli.options.JsonOutput;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code dynnibal bench shard-heap}: the heap of one shard's index per target. */
@Command(
    name = "shard-heap",
    description = {
      "Measure the heap one shard's index (SG tree, vectors, ids) takes per target, alone in this JVM.",
      "Targets are inserted one by one as a shard indexes them. bench scale's heap figure holds the whole job's;",
      "this one only the index."
    })
final class ShardHeapBenchCommand implements Callable<Integer> {
  @Option(
      names = "--targets",
      defaultValue = "200000",
      description = "Number of targets (default ${DEFAULT-VALUE}).")
  int targets;

  @Option(
      names = "--dim",
      defaultValue = "64",
      description = "Vector dimension d' (default ${DEFAULT-VALUE}, the job's).")
  int dim;

  @Option(
      names = "--seed",
      defaultValue = "7",
      description = "Seed of the vectors (default ${DEFAULT-VALUE}).")
  long seed;

  @Mixin JsonOutput json;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (targets < 1 || dim < 1) {
      throw new ParameterException(spec.commandLine(), "need targets and dim >= 1");
    }
    json.print(
        ShardHeapBenchmark.run(new ShardHeapBenchmark.Config(targets, dim, seed), System.err));
    return 0;
  }
}
