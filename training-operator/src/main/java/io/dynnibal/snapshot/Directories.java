package io.dynnibal.snapshot;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Removing snapshot and scratch directories, used by every place that cleans up after itself. */
public final class Directories {
  private Directories() {}

  /**
   * Deletes a directory and everything under it (children first); a missing directory is not an
   * error.
   */
  public static void deleteRecursively(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
