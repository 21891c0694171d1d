package io.dynnibal.cli;

import io.dynnibal.cli.options.TargetsFile;
import io.dynnibal.snapshot.ParameterSnapshots;
import java.net.URI;
import java.nio.file.Path;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** The options of a command that reads a trained model and the targets it ranks. */
class SnapshotAndTargets {
  @Option(
      names = "--snapshot",
      required = true,
      description = "Snapshot directory (a path or file: URI).")
  String snapshot;

  @Mixin TargetsFile targets;

  URI snapshotUri() {
    return ParameterSnapshots.parse(snapshot);
  }

  Path targets() {
    return targets.targets();
  }
}
