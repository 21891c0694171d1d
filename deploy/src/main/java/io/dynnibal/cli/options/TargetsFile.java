package io.dynnibal.cli.options;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --targets} (required): the targets a command encodes, searches or ranks. */
public final class TargetsFile {
  @Option(names = "--targets", required = true, description = JsonlFiles.TARGETS)
  Path targets;

  /** The targets file; never null once parsed. */
  public Path targets() {
    return targets;
  }
}
