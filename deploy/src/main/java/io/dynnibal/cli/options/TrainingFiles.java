package io.dynnibal.cli.options;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --targets} and {@code --train} (both required): the files a trainer reads. */
public final class TrainingFiles {
  @Option(names = "--targets", required = true, description = JsonlFiles.TARGETS)
  Path targets;

  @Option(names = "--train", required = true, description = JsonlFiles.PAIRS)
  Path train;

  /** The targets file; never null once parsed. */
  public Path targets() {
    return targets;
  }

  /** The training pairs file; never null once parsed. */
  public Path train() {
    return train;
  }
}
