package io.dynnibal.cli;

import java.util.ServiceLoader;
import java.util.logging.Level;
import java.util.logging.Logger;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code ./dynnibal}: one entry point for everything a user runs. Exit codes: 0 done, 1 failed, 2
 * bad usage, 3 a status or watch command found nothing (no server running, no report).
 *
 * <p>The commands listed here are the product's; every {@link CommandPlugin} on the classpath adds
 * its own after them (the benchmarks module: {@code bench}, {@code experiment}, {@code soak}), and
 * {@code help} comes last.
 */
@Command(
    name = "dynnibal",
    mixinStandardHelpOptions = true,
    // Every command, down to `cluster start`, answers --help (and --version).
    scope = CommandLine.ScopeType.INHERIT,
    versionProvider = VersionCommand.Provider.class,
    description = {
      "Streaming online training of dual encoders with DyNNIBAL hard negatives:",
      "Kafka -> Flink (SG-tree index in RocksDB state) -> DJL PyTorch trainer -> model updates -> index."
    },
    subcommands = {
      VersionCommand.class,
      DemoCommand.class,
      PublishCommand.class,
      TrainCommand.class,
      EvalCommand.class,
      SearchCommand.class,
      ExportCommand.class,
      KafkaCommand.class,
      ClusterCommand.class,
      SubmitCommand.class,
      JobsCommand.class,
      CancelCommand.class,
      WatchCommand.class,
      SettingsCommand.class
    })
public final class DynnibalCli implements Runnable {
  /**
   * Lucene (BM25 baselines, export) sees the Vector API module the launcher adds for the index
   * (VectorMath) and warns on Java 17 that it is too old to use it itself: true, and nothing to act
   * on. Held here, as java.util.logging keeps its loggers only weakly.
   */
  private static final Logger LUCENE_VECTORIZATION =
      Logger.getLogger("org.apache.lucene.internal.vectorization");

  @Spec CommandSpec spec;

  public static void main(String[] args) {
    if (Runtime.version().feature() < 20) {
      LUCENE_VECTORIZATION.setLevel(Level.SEVERE);
    }
    System.exit(execute(args));
  }

  /** Runs the CLI in this JVM and returns its exit code (tests call this). */
  public static int execute(String... args) {
    return commandLine().execute(args);
  }

  static CommandLine commandLine() {
    CommandLine commandLine = new CommandLine(new DynnibalCli());
    for (CommandPlugin plugin : ServiceLoader.load(CommandPlugin.class)) {
      for (Object command : plugin.commands()) {
        commandLine.addSubcommand(command);
      }
    }
    commandLine.addSubcommand(new CommandLine.HelpCommand());
    // Descriptions are written in lines of up to ~115 characters; 80 columns would break each of
    // them in two.
    commandLine.setUsageHelpWidth(120);
    commandLine.setExecutionExceptionHandler(DynnibalCli::reportFailure);
    return commandLine;
  }

  /**
   * Bad input (a missing file, a malformed line, a bad snapshot) is the user's to fix: one line
   * naming it, exit 1. Anything else is our bug: the stack trace too.
   */
  private static int reportFailure(
      Exception e, CommandLine commandLine, CommandLine.ParseResult parseResult) {
    if (e instanceof IllegalArgumentException
        || e instanceof IllegalStateException
        || e instanceof java.io.UncheckedIOException
        || e instanceof java.io.IOException) {
      commandLine
          .getErr()
          .println("dynnibal " + commandLine.getCommandName() + ": " + e.getMessage());
    } else {
      e.printStackTrace(commandLine.getErr());
    }
    return 1;
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "Missing a command.");
  }
}
