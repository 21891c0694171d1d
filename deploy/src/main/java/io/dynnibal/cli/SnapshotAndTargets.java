package io.dynnibal.cli;

import io.dynnibal.snapshot.ParameterSnapshots;
import java.net.URI;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The options of a command that reads a trained model and the targets it ranks. */
class SnapshotAndTargets {
  @Option(
      names = "--snapshot",
      required = true,
      description = "Snapshot directory (a path or file: URI).")
  String snapshot;

  @Option(
      names = "--targets",
      required = true,
      description = "Targets JSONL: {target_id, target_text}.")
  Path targets;

  URI snapshotUri() {
    return ParameterSnapshots.parse(snapshot);
  }
}
