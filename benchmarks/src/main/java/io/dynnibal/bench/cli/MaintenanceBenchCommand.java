package io.dynnibal.bench.cli;

import io.dynnibal.bench.index.MaintenanceBenchmark;
import io.dynnibal.cli.options.JsonOutput;
import io.dynnibal.index.sgtree.TreeRepair;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code dynnibal bench maintenance}: tree repair against a rebuild and an HNSW baseline. */
@Command(
    name = "maintenance",
    description = {
      "Compare repairing the SG tree after the cache moves with rebuilding it and with Lucene's HNSW.",
      "The cache moves by a near-identity re-encoding map; the sampler's overlap is measured after repair and after",
      "rebuild, over the same vectors."
    })
final class MaintenanceBenchCommand implements Callable<Integer> {
  @Option(
      names = "--targets",
      defaultValue = "100000",
      description = "Number of targets (default ${DEFAULT-VALUE}).")
  int targets;

  @Option(
      names = "--dim",
      defaultValue = "128",
      description = "Cache dimension d' (default ${DEFAULT-VALUE}).")
  int dim;

  @Option(
      names = "--drift",
      defaultValue = "0.05",
      description = "Strength of the map I + drift * G / sqrt(d') (default ${DEFAULT-VALUE}).")
  double drift;

  @Option(names = "--seed", defaultValue = "1", description = "Seed (default ${DEFAULT-VALUE}).")
  long seed;

  @Option(
      names = "--queries",
      defaultValue = "50",
      description = "Queries for sampler quality (default ${DEFAULT-VALUE}).")
  int queries;

  @Option(
      names = "--mode",
      defaultValue = "bounded",
      description =
          "Repair bookkeeping: bounded (the paper's fast check) or exact (default ${DEFAULT-VALUE}).")
  String mode;

  @Option(
      names = "--no-hnsw",
      description = "Skip the Lucene HNSW rebuild (slow at millions of vectors).")
  boolean noHnsw;

  @Mixin JsonOutput json;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (targets < 100 || dim < 2 || !(drift >= 0) || queries < 1) {
      throw new ParameterException(
          spec.commandLine(), "need targets >= 100, dim >= 2, drift >= 0, queries >= 1");
    }
    TreeRepair.Mode repairMode;
    try {
      repairMode = TreeRepair.Mode.valueOf(mode.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new ParameterException(
          spec.commandLine(), "--mode must be bounded or exact, got " + mode);
    }
    json.print(
        MaintenanceBenchmark.run(
            new MaintenanceBenchmark.Config(
                targets, dim, drift, seed, queries, 64, repairMode, !noHnsw),
            System.err));
    return 0;
  }
}
