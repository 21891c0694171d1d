package io.dynnibal.jobs.training;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.snapshot.ParameterSnapshots;
import io.dynnibal.snapshot.PrivateDirectory;
import java.net.URI;
import java.nio.file.Path;

/**
 * The job's directories on a local filesystem, checked before it starts: {@code checkpoint.dir}
 * (when a {@code file:} URI) and {@code snapshot.dir}, each created owner-only or refused when
 * another user owns it ({@link PrivateDirectory}). Other filesystems have permissions of their own.
 */
public final class StateDirectories {
  private StateDirectories() {}

  /** Prepares both of {@code config}'s directories (validated: absolute). */
  public static void prepare(TrainingJobConfig config) {
    URI checkpoints = URI.create(config.job.checkpointDir);
    if ("file".equals(checkpoints.getScheme())) {
      PrivateDirectory.prepare(Path.of(checkpoints), "checkpoint.dir");
    }
    PrivateDirectory.prepare(
        ParameterSnapshots.toPath(ParameterSnapshots.parse(config.job.snapshotDir)),
        "snapshot.dir");
  }
}
