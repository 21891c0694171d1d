package io.dynnibal.trainer;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.snapshot.Directories;
import io.dynnibal.snapshot.ParameterSnapshots;
import io.dynnibal.snapshot.PrivateDirectory;
import io.dynnibal.snapshot.SnapshotExistsException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongPredicate;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run's model directories on disk: {@code <snapshot dir>/run-<id>/model-<version>} for the
 * versions the shards load, {@code kept/model-<step>} for models kept along the way, and {@code
 * final/model-<step>} for the model at {@code max.steps}.
 *
 * <p>Invariant: a version directory exists from the moment its model update is emitted until a
 * completed checkpoint shows every shard holds a newer one, including versions of a branch a
 * restore discarded: their numbers must stay visible to {@link #newestVersion} (never reused), and
 * a shard may have loaded one.
 */
final class ModelVersionStore {
  private static final Logger LOG = LoggerFactory.getLogger(ModelVersionStore.class);
  private static final String VERSION_DIR = "model-\\d+";

  private final URI base;
  private final long seed;

  /** Counts a snapshot that could not be written. */
  private final Runnable writeFailed;

  ModelVersionStore(String snapshotDir, String runId, long seed) {
    this(snapshotDir, runId, seed, () -> {});
  }

  ModelVersionStore(String snapshotDir, String runId, long seed, Runnable writeFailed) {
    this.base =
        PrivateDirectory.prepare(
                ParameterSnapshots.toPath(ParameterSnapshots.parse(snapshotDir)), "snapshot.dir")
            .resolve("run-" + runId)
            .toUri();
    this.seed = seed;
    this.writeFailed = writeFailed;
  }

  /** The run's directory: model versions are written under it. */
  URI base() {
    return base;
  }

  /** Keeps the encoder at {@code step} in {@code kept/}, once. */
  void keep(DualEncoder encoder, long step) {
    writeOnce(encoder, "kept", step);
  }

  /**
   * The trained encoder at {@code max.steps}, in {@code final/}: what a user evaluates or serves. A
   * replay after a restore finds it written already; after a failed write (a full disk) the trainer
   * calls this again, at every later batch and checkpoint, until it is written.
   */
  void writeFinal(DualEncoder encoder, long step) {
    URI uri = writeOnce(encoder, "final", step);
    if (uri != null) {
      LOG.info("step {}: max.steps reached, final model written to {}", step, uri);
    }
  }

  /**
   * Writes model {@code step} under {@code folder} unless it is there; null when it was, or when it
   * could not be written (counted and logged: a full disk stops neither training nor the job).
   */
  private URI writeOnce(DualEncoder encoder, String folder, long step) {
    URI dir = ParameterSnapshots.toPath(base).resolve(folder).toUri();
    try {
      return ParameterSnapshots.write(encoder, dir, step, seed);
    } catch (SnapshotExistsException written) {
      return null; // by this trainer before a restore, or by a superseded one still running
    } catch (UncheckedIOException e) {
      writeFailed.run();
      LOG.warn("step {}: the {} model could not be written: {}", step, folder, e.getMessage());
      return null;
    }
  }

  /**
   * The newest version on disk, 0 when there is none. On a restore, the versions above the restored
   * one were emitted by a lost branch, and their numbers must never be used again (see {@link
   * TrainerFunction}).
   */
  long newestVersion() {
    return versionDirs().keySet().stream().mapToLong(Long::longValue).max().orElse(0);
  }

  /** Deletes versions below {@code version}: no restore can need them any more. */
  void deleteBelow(long version) {
    delete(v -> v < version);
  }

  private void delete(LongPredicate doomed) {
    Map<Long, Path> dirs;
    try {
      dirs = versionDirs();
    } catch (UncheckedIOException e) {
      LOG.warn("could not clean up {}: {}", base, e.toString());
      return;
    }
    for (var version : dirs.entrySet()) {
      if (doomed.test(version.getKey())) {
        try {
          Directories.deleteRecursively(version.getValue());
        } catch (IOException | UncheckedIOException e) {
          LOG.warn("could not delete {}: {}", version.getValue(), e.toString());
        }
      }
    }
  }

  /** The version directories on disk, by version. */
  private Map<Long, Path> versionDirs() {
    Path dir = ParameterSnapshots.toPath(base);
    Map<Long, Path> versions = new TreeMap<>();
    if (!Files.isDirectory(dir)) {
      return versions;
    }
    try (Stream<Path> entries = Files.list(dir)) {
      for (Path p : entries.toList()) {
        String name = p.getFileName().toString();
        if (name.matches(VERSION_DIR)) {
          versions.put(Long.parseLong(name.substring(6)), p);
        }
      }
      return versions;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list the model versions in " + dir, e);
    }
  }
}
