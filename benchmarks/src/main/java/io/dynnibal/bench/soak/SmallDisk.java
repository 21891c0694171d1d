package io.dynnibal.bench.soak;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A tmpfs of its own for what must run out of space: mounted at a directory, filled to its last few
 * kilobytes on demand and freed again, so a disk really is full (writes fail with "No space left on
 * device") without touching any other filesystem. Mounting needs root.
 */
public final class SmallDisk implements AutoCloseable {
  private final Path mountPoint;
  private int fillers;

  private SmallDisk(Path mountPoint) {
    this.mountPoint = mountPoint;
  }

  /**
   * Mounts a tmpfs of {@code megabytes} at {@code mountPoint} (created if missing); empty with the
   * reason when the system refuses (not root, no tmpfs).
   */
  public static Result mount(Path mountPoint, int megabytes) throws IOException {
    Files.createDirectories(mountPoint);
    Optional<String> refused =
        run(
            "mount",
            "-t",
            "tmpfs",
            "-o",
            "size=" + megabytes + "m",
            "tmpfs",
            mountPoint.toString());
    return refused.isPresent()
        ? new Result(null, "cannot mount a tmpfs at " + mountPoint + ": " + refused.get())
        : new Result(new SmallDisk(mountPoint), null);
  }

  /** A mounted disk, or why there is none. */
  public record Result(SmallDisk disk, String refused) {}

  public Path path() {
    return mountPoint;
  }

  /**
   * Writes a filler file until only about {@code leftBytes} are free; again after files were
   * deleted, it takes what they freed.
   */
  public void fill(long leftBytes) throws IOException {
    long size = Math.max(0, free() - leftBytes);
    if (size == 0) {
      return;
    }
    Path filler = mountPoint.resolve(".filler-" + fillers++);
    try (RandomAccessFile file = new RandomAccessFile(filler.toFile(), "rw")) {
      byte[] block = new byte[1 << 16];
      for (long written = 0; written < size; ) {
        int n = (int) Math.min(block.length, size - written);
        file.write(block, 0, n);
        written += n;
      }
    } catch (IOException full) {
      // Another writer took the last bytes meanwhile: the disk is as full as it gets.
    }
  }

  /** Bytes still free. */
  public long free() throws IOException {
    return Files.getFileStore(mountPoint).getUsableSpace();
  }

  /** Deletes every filler file. */
  public void release() throws IOException {
    for (int i = 0; i < fillers; i++) {
      Files.deleteIfExists(mountPoint.resolve(".filler-" + i));
    }
  }

  /** Unmounts the disk (lazily: a process that still has a file open keeps it until it closes). */
  @Override
  public void close() throws IOException {
    Optional<String> refused = run("umount", "-l", mountPoint.toString());
    if (refused.isPresent()) {
      throw new IOException("umount " + mountPoint + ": " + refused.get());
    }
  }

  /** Runs a command: empty when it succeeded, else its exit status and output. */
  private static Optional<String> run(String... command) throws IOException {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        return Optional.of(String.join(" ", command) + " did not finish in 30 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
      return Optional.of("interrupted");
    }
    String output = new String(process.getInputStream().readAllBytes()).trim();
    return process.exitValue() == 0
        ? Optional.empty()
        : Optional.of("exit " + process.exitValue() + ": " + output);
  }
}
