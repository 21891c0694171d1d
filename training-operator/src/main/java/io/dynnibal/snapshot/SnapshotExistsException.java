package io.dynnibal.snapshot;

import java.nio.file.Path;

/**
 * A snapshot's version is taken: its directory exists, written by another writer (a trainer that a
 * restore superseded and that still runs, or a branch the restore discarded). Versions are never
 * overwritten, so the writer must number past it.
 */
public final class SnapshotExistsException extends IllegalStateException {
  private final transient Path existing;

  SnapshotExistsException(Path existing) {
    super("snapshot " + existing + " already exists; model versions are never overwritten");
    this.existing = existing;
  }

  /** The directory that holds the version already. */
  public Path existing() {
    return existing;
  }
}
