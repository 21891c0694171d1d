package io.dynnibal.jobs.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code ./dynnibal}: one entry point for everything a user runs. Exit codes: 0 done, 1 failed, 2 bad usage,
 * {@value PlannedCommand#NOT_BUILT_YET} a command that is planned but not built yet.
 */
@Command(
    name = "dynnibal",
    mixinStandardHelpOptions = true,
    versionProvider = VersionCommand.Provider.class,
    description = {
      "Streaming online training of dual encoders with DyNNIBAL hard negatives:",
      "Kafka -> Flink (SG-tree index in RocksDB state) -> DJL PyTorch trainer -> model updates -> index."
    },
    subcommands = {VersionCommand.class, BenchCommand.class, CommandLine.HelpCommand.class})
public final class DynnibalCli implements Runnable {
  @Spec CommandSpec spec;

  public static void main(String[] args) {
    System.exit(execute(args));
  }

  /** Runs the CLI in this JVM and returns its exit code (tests call this). */
  public static int execute(String... args) {
    return commandLine().execute(args);
  }

  static CommandLine commandLine() {
    CommandLine commandLine = new CommandLine(new DynnibalCli());
    PlannedCommand.addAll(commandLine);
    return commandLine;
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "Missing a command.");
  }
}
