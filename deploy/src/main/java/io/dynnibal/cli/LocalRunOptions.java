package io.dynnibal.cli;

import io.dynnibal.local.Corpus;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The options of every command that runs the job on this machine (demo, experiment): the corpus
 * (bundled Debian by default), the job configuration ({@link JobSettingsOptions}) and a work
 * directory (temporary unless given).
 */
final class LocalRunOptions extends JobSettingsOptions {
  @Option(
      names = "--targets",
      description = "Targets JSONL instead of the bundled corpus (with --train and --eval).")
  Path targets;

  @Option(names = "--train", description = "Training pairs JSONL.")
  Path train;

  @Option(names = "--eval", description = "Evaluation queries JSONL.")
  Path eval;

  @Option(
      names = "--work-dir",
      description =
          "Where the broker, checkpoints and snapshots live (default: a temporary"
              + " directory, deleted afterwards).")
  Path workDir;

  /** The files given, or the bundled corpus; all three files or none. */
  Corpus corpus(CommandLine commandLine) {
    boolean anyFile = targets != null || train != null || eval != null;
    if (anyFile && (targets == null || train == null || eval == null)) {
      throw new CommandLine.ParameterException(
          commandLine, "--targets, --train and --eval go together");
    }
    return anyFile ? Corpus.files(targets, train, eval) : Corpus.bundledDebian();
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
