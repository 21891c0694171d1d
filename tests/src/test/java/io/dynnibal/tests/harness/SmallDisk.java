package io.dynnibal.tests.harness;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A tmpfs of a few megabytes mounted for one test, which the test can fill to the last few
 * kilobytes and free again: a disk that really runs out of space. Mounting needs root; where it is
 * refused, the test is skipped with that reason.
 */
public final class SmallDisk implements AutoCloseable {
  private final Path mountPoint;
  private final Path filler;

  private SmallDisk(Path mountPoint) {
    this.mountPoint = mountPoint;
    this.filler = mountPoint.resolve(".filler");
  }

  /** Mounts a tmpfs of {@code megabytes} at {@code mountPoint} (created if missing). */
  public static SmallDisk mount(Path mountPoint, int megabytes) throws Exception {
    Files.createDirectories(mountPoint);
    String output =
        run(
            "mount",
            "-t",
            "tmpfs",
            "-o",
            "size=" + megabytes + "m",
            "tmpfs",
            mountPoint.toString());
    Assumptions.assumeTrue(output == null, () -> "cannot mount a tmpfs here: " + output);
    return new SmallDisk(mountPoint);
  }

  public Path path() {
    return mountPoint;
  }

  /** Fills the disk until only {@code leftBytes} (rounded to pages) are free. */
  public void fill(long leftBytes) throws IOException {
    long free = Files.getFileStore(mountPoint).getUsableSpace();
    long size = Math.max(0, free - leftBytes);
    try (RandomAccessFile file = new RandomAccessFile(filler.toFile(), "rw")) {
      byte[] block = new byte[1 << 16];
      for (long written = 0; written < size; ) {
        int n = (int) Math.min(block.length, size - written);
        file.write(block, 0, n);
        written += n;
      }
      file.getFD().sync();
    }
  }

  /** Bytes still free. */
  public long free() throws IOException {
    return Files.getFileStore(mountPoint).getUsableSpace();
  }

  /** Deletes what {@link #fill} wrote. */
  public void release() throws IOException {
    Files.deleteIfExists(filler);
  }

  @Override
  public void close() throws Exception {
    String output = run("umount", "-l", mountPoint.toString());
    if (output != null) {
      throw new IllegalStateException("umount " + mountPoint + ": " + output);
    }
  }

  /** Runs a command; null when it succeeded, else its exit status and output. */
  private static String run(String... command) throws Exception {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      return String.join(" ", command) + " did not finish in 30 s";
    }
    String output = new String(process.getInputStream().readAllBytes()).trim();
    return process.exitValue() == 0 ? null : "exit " + process.exitValue() + ": " + output;
  }
}
