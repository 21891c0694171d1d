package io.dynnibal.cli.options;

import io.dynnibal.local.Corpus;
import java.nio.file.Path;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * {@code --targets}, {@code --train} and {@code --eval}, all three or none: a corpus from files, or
 * the bundled Debian corpus when none is given.
 */
public final class CorpusFiles {
  @Option(
      names = "--targets",
      description = "Targets JSONL instead of the bundled corpus (with --train and --eval).")
  Path targets;

  @Option(names = "--train", description = "Training pairs JSONL.")
  Path train;

  @Option(names = "--eval", description = "Evaluation queries JSONL.")
  Path eval;

  /**
   * The files given, or the bundled corpus.
   *
   * @throws CommandLine.ParameterException when some but not all three files are given
   */
  public Corpus corpus(CommandLine commandLine) {
    boolean anyFile = targets != null || train != null || eval != null;
    if (anyFile && (targets == null || train == null || eval == null)) {
      throw new CommandLine.ParameterException(
          commandLine, "--targets, --train and --eval go together");
    }
    return anyFile ? Corpus.files(targets, train, eval) : Corpus.bundledDebian();
  }
}
