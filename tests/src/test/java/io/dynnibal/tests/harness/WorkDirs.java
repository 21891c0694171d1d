package io.dynnibal.tests.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the tests write: {@code dynnibal.test.workdir} (the build sets it), else target/test-work.
 */
public final class WorkDirs {
  private WorkDirs() {}

  /** The root of every test's work directory. */
  public static Path root() {
    return Path.of(System.getProperty("dynnibal.test.workdir", "target/test-work"));
  }

  /** A new directory {@code name-<nanos>} under {@link #root}, created. */
  public static Path fresh(String name) throws IOException {
    return Files.createDirectories(root().resolve(name + "-" + System.nanoTime()));
  }
}
