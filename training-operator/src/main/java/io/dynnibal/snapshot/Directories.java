package io.dynnibal.snapshot;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Removing snapshot and scratch directories, used by every place that cleans up after itself, and
 * making a directory's entries durable.
 */
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

  /**
   * Flushes {@code dir}'s entries to the device (fsync of the directory): after a file is created
   * or renamed in it, the name survives a power loss only once its directory is synced.
   */
  public static void sync(Path dir) throws IOException {
    try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
      channel.force(true);
    }
  }
}
