package io.dynnibal.jobs.cli;

import io.dynnibal.jobs.demo.Corpus;
import io.dynnibal.jobs.training.TrainingJobConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The options of every command that runs the job on this machine (demo, experiment): the corpus (bundled Debian by
 * default), the job configuration ({@code --config}, {@code --set}) and a work directory (temporary unless given).
 */
final class LocalRunOptions {
  @Option(names = "--targets", description = "Targets JSONL instead of the bundled corpus (with --train and --eval).")
  Path targets;

  @Option(names = "--train", description = "Training pairs JSONL.")
  Path train;

  @Option(names = "--eval", description = "Evaluation queries JSONL.")
  Path eval;

  @Option(names = "--config", description = "Job configuration (properties file); see --set for the keys.")
  Path configFile;

  @Option(names = "--set", description = "Override one job setting, key=value (repeatable), e.g. --set reencode.every=50")
  List<String> overrides = new ArrayList<>();

  @Option(names = "--work-dir", description = "Where the broker, checkpoints and snapshots live (default: a temporary"
      + " directory, deleted afterwards).")
  Path workDir;

  /** The files given, or the bundled corpus; all three files or none. */
  Corpus corpus(CommandLine commandLine) {
    boolean anyFile = targets != null || train != null || eval != null;
    if (anyFile && (targets == null || train == null || eval == null)) {
      throw new CommandLine.ParameterException(commandLine, "--targets, --train and --eval go together");
    }
    return anyFile ? Corpus.files(targets, train, eval) : Corpus.bundledDebian();
  }

  /** The command's defaults, then {@code --config}, then {@code --set}: what the user says wins. */
  TrainingJobConfig config(List<String> defaults) throws IOException {
    TrainingJobConfig config = TrainingJobConfig.load(null, defaults);
    if (configFile != null) {
      java.util.Properties file = new java.util.Properties();
      try (java.io.Reader reader = Files.newBufferedReader(configFile)) {
        file.load(reader);
      }
      for (String key : new java.util.TreeSet<>(file.stringPropertyNames())) {
        config.apply(key, file.getProperty(key));
      }
    }
    for (String override : overrides) {
      int eq = override.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("--set \"" + override + "\" is not key=value");
      }
      config.apply(override.substring(0, eq), override.substring(eq + 1));
    }
    return config;
  }

  /** {@code --work-dir}, or a new temporary directory that {@link #cleanUp} deletes. */
  Path workDir(String prefix) throws IOException {
    return workDir != null ? workDir : Files.createTempDirectory(prefix);
  }

  void cleanUp(Path work) {
    if (workDir == null) {
      try {
        io.dynnibal.snapshot.Directories.deleteRecursively(work);
      } catch (IOException e) {
        System.err.println("could not delete " + work + ": " + e.getMessage());
      }
    }
  }
}
