package io.dynnibal.bench.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code dynnibal bench ...}: benchmarks that print their figures as one JSON object. Never tests:
 * timings belong here.
 */
@Command(
    name = "bench",
    description =
        "Benchmark the index, samplers, re-encoding, trainer and whole job; each prints one JSON object.",
    subcommands = {
      IndexBenchCommand.class,
      ShardHeapBenchCommand.class,
      MaintenanceBenchCommand.class,
      ReencodeBenchCommand.class,
      TrainerBenchCommand.class,
      TowerReencodeBenchCommand.class,
      SamplerFidelityBenchCommand.class,
      PipelineBenchCommand.class,
      ScaleBenchCommand.class,
      MiningBenchCommand.class
    })
final class BenchCommand implements Runnable {
  @Spec CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(
        spec.commandLine(),
        "Missing a benchmark: index, shard-heap, maintenance, reencode, trainer, tower-reencode,"
            + " sampler-fidelity, pipeline, scale or mining.");
  }
}
