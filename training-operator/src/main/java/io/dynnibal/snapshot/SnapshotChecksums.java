package io.dynnibal.snapshot;

import io.dynnibal.snapshot.SnapshotManifest.FileChecksum;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * The checksums that make every file of a snapshot verifiable: each data file's size and CRC-32C is
 * recorded in the manifest as it is written ({@link #recording}), and the manifest's own CRC-32C in
 * {@value #MANIFEST_CHECKSUM} beside it. A reader {@link #verify}s a file before it parses it, so a
 * truncated, torn or bit-flipped copy is refused with the file's name instead of loading a silently
 * different model.
 */
final class SnapshotChecksums {
  /** The file holding the manifest's CRC-32C, as 8 hexadecimal digits. */
  static final String MANIFEST_CHECKSUM = "manifest.crc32c";

  private SnapshotChecksums() {}

  /** {@code content}, recording the size and checksum of what it writes under {@code name}. */
  static SnapshotFiles.FileContent recording(
      String name, SnapshotFiles.FileContent content, Map<String, FileChecksum> into) {
    return channel -> {
      Counting counting = new Counting(channel);
      content.writeTo(counting);
      into.put(name, new FileChecksum(counting.bytes, hex(counting.crc.getValue())));
    };
  }

  /**
   * Checks that {@code file} has the size and checksum the manifest recorded.
   *
   * @throws CorruptSnapshotException naming the file when it does not
   */
  static void verify(Path file, FileChecksum expected) throws IOException {
    if (!Files.isRegularFile(file)) {
      throw new CorruptSnapshotException(file + " is missing from its snapshot");
    }
    CRC32C crc = new CRC32C();
    long bytes = 0;
    byte[] buffer = new byte[1 << 16];
    try (InputStream in = Files.newInputStream(file)) {
      for (int n; (n = in.read(buffer)) > 0; ) {
        crc.update(buffer, 0, n);
        bytes += n;
      }
    }
    FileChecksum actual = new FileChecksum(bytes, hex(crc.getValue()));
    if (!actual.equals(expected)) {
      throw new CorruptSnapshotException(
          file
              + " is corrupt: it holds "
              + actual.bytes()
              + " bytes with CRC-32C "
              + actual.crc32c()
              + ", the snapshot recorded "
              + expected.bytes()
              + " bytes with CRC-32C "
              + expected.crc32c());
    }
  }

  /**
   * Checks the manifest's bytes against {@value #MANIFEST_CHECKSUM} beside it (snapshots of format
   * 1 have none).
   */
  static void verifyManifest(Path manifest, byte[] content) throws IOException {
    Path sidecar = manifest.resolveSibling(MANIFEST_CHECKSUM);
    if (!Files.exists(sidecar)) {
      return;
    }
    String recorded = Files.readString(sidecar, StandardCharsets.US_ASCII).trim();
    String actual = checksum(content).crc32c();
    if (!actual.equals(recorded)) {
      throw new CorruptSnapshotException(
          manifest
              + " is corrupt: its CRC-32C is "
              + actual
              + ", "
              + MANIFEST_CHECKSUM
              + " says "
              + recorded);
    }
  }

  /** Size and checksum of {@code content}. */
  static FileChecksum checksum(byte[] content) {
    CRC32C crc = new CRC32C();
    crc.update(content);
    return new FileChecksum(content.length, hex(crc.getValue()));
  }

  private static String hex(long crc) {
    return String.format("%08x", crc);
  }

  /** A snapshot file whose bytes are not the ones written. */
  static final class CorruptSnapshotException extends IllegalArgumentException {
    CorruptSnapshotException(String message) {
      super(message);
    }
  }

  /** Passes writes on, counting and checksumming the bytes. */
  private static final class Counting implements WritableByteChannel {
    private final WritableByteChannel out;
    private final CRC32C crc = new CRC32C();
    private long bytes;

    Counting(WritableByteChannel out) {
      this.out = out;
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
      ByteBuffer view = src.duplicate();
      int n = out.write(src);
      view.limit(view.position() + n);
      crc.update(view);
      bytes += n;
      return n;
    }

    @Override
    public boolean isOpen() {
      return out.isOpen();
    }

    @Override
    public void close() throws IOException {
      out.close();
    }
  }
}
