package io.dynnibal.cli;

import io.dynnibal.cli.options.CorpusFiles;
import io.dynnibal.local.Corpus;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The options of every command that runs the job on this machine (demo, experiment): the corpus
 * (bundled Debian by default), the job configuration ({@link JobSettingsOptions}) and a work
 * directory (temporary unless given).
 */
public final class LocalRunOptions extends JobSettingsOptions {
  @Mixin CorpusFiles files;

  @Option(
      names = "--work-dir",
      description =
          "Where the broker, checkpoints and snapshots live (default: a temporary"
              + " directory, deleted afterwards).")
  Path workDir;

  /** The files given, or the bundled corpus; all three files or none. */
  public Corpus corpus(CommandLine commandLine) {
    return files.corpus(commandLine);
  }

  /** {@code --work-dir}, or a new temporary directory that {@link #cleanUp} deletes. */
  public Path workDir(String prefix) throws IOException {
    return workDir != null ? workDir : Files.createTempDirectory(prefix);
  }

  public void cleanUp(Path work) {
    if (workDir == null) {
      try {
        io.dynnibal.snapshot.Directories.deleteRecursively(work);
      } catch (IOException e) {
        System.err.println("could not delete " + work + ": " + e.getMessage());
      }
    }
  }
}
