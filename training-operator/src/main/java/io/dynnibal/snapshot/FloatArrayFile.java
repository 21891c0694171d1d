package io.dynnibal.snapshot;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;

/**
 * A file of float arrays: magic {@code DYNF}, array count, then per array its length and values
 * (little endian), then a CRC-32 of all preceding bytes. The checksum turns a truncated or
 * corrupted copy into a clear error instead of a silently different model.
 */
public final class FloatArrayFile {
  private static final int MAGIC = 0x464E5944; // "DYNF" read little endian
  private static final int CHUNK = 1 << 20;

  private FloatArrayFile() {}

  public static void write(Path file, List<float[]> arrays) throws IOException {
    try (FileChannel channel =
        FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      write(channel, arrays);
      channel.force(true);
    }
  }

  /**
   * The same bytes as {@link #write(Path, List)}, into any channel (e.g. memory, for a checkpoint).
   */
  static void write(java.nio.channels.WritableByteChannel channel, List<float[]> arrays)
      throws IOException {
    CRC32 crc = new CRC32();
    ByteBuffer buffer = ByteBuffer.allocate(CHUNK).order(ByteOrder.LITTLE_ENDIAN);
    buffer.putInt(MAGIC).putInt(arrays.size());
    for (float[] array : arrays) {
      ensure(buffer, 4, channel, crc);
      buffer.putInt(array.length);
      for (int i = 0; i < array.length; ) {
        ensure(buffer, 4, channel, crc);
        int n = Math.min(array.length - i, buffer.remaining() / 4);
        buffer.asFloatBuffer().put(array, i, n);
        buffer.position(buffer.position() + 4 * n);
        i += n;
      }
    }
    flush(buffer, channel, crc);
    ByteBuffer trailer =
        ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(crc.getValue()).flip();
    while (trailer.hasRemaining()) {
      channel.write(trailer);
    }
  }

  public static List<float[]> read(Path file) throws IOException {
    CRC32 crc = new CRC32();
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = channel.size();
      if (size < 16) {
        throw new IOException(file + " is truncated (" + size + " bytes)");
      }
      Reader reader = new Reader(channel, size - 8, crc, file);
      if (reader.nextInt() != MAGIC) {
        throw new IOException(file + " is not a dynnibal float-array file (bad magic)");
      }
      int count = reader.nextInt();
      if (count < 0 || 4L * count > size) {
        throw new IOException(file + " is corrupt: claims " + count + " arrays");
      }
      List<float[]> arrays = new ArrayList<>(count);
      for (int a = 0; a < count; a++) {
        int length = reader.nextInt();
        if (length < 0 || 4L * length > size) {
          throw new IOException(file + " is corrupt: array " + a + " claims " + length + " values");
        }
        float[] array = new float[length];
        for (int i = 0; i < length; ) {
          ByteBuffer b = reader.need(4);
          int n = Math.min(length - i, b.remaining() / 4);
          b.asFloatBuffer().get(array, i, n);
          b.position(b.position() + 4 * n);
          i += n;
        }
        arrays.add(array);
      }
      if (reader.position() != size - 8) {
        throw new IOException(
            file + " is corrupt: " + (size - 8 - reader.position()) + " unexpected bytes");
      }
      ByteBuffer trailer = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
      channel.read(trailer, size - 8);
      long expected = trailer.flip().getLong();
      if (expected != crc.getValue()) {
        throw new IOException(file + " is corrupt: checksum mismatch");
      }
      return arrays;
    }
  }

  private static void ensure(
      ByteBuffer buffer, int bytes, java.nio.channels.WritableByteChannel channel, CRC32 crc)
      throws IOException {
    if (buffer.remaining() < bytes) {
      flush(buffer, channel, crc);
    }
  }

  private static void flush(
      ByteBuffer buffer, java.nio.channels.WritableByteChannel channel, CRC32 crc)
      throws IOException {
    buffer.flip();
    crc.update(buffer.duplicate());
    while (buffer.hasRemaining()) {
      channel.write(buffer);
    }
    buffer.clear();
  }

  /** Sequential reads of the payload (everything but the trailer), feeding the checksum. */
  private static final class Reader {
    private final FileChannel channel;
    private final long end;
    private final CRC32 crc;
    private final Path file;
    private final ByteBuffer buffer = ByteBuffer.allocate(CHUNK).order(ByteOrder.LITTLE_ENDIAN);
    private long consumed;

    Reader(FileChannel channel, long end, CRC32 crc, Path file) {
      this.channel = channel;
      this.end = end;
      this.crc = crc;
      this.file = file;
      buffer.limit(0);
    }

    int nextInt() throws IOException {
      return need(4).getInt();
    }

    /** The buffer with at least {@code bytes} readable. */
    ByteBuffer need(int bytes) throws IOException {
      if (buffer.remaining() < bytes) {
        buffer.compact();
        long fileRemaining = end - consumed;
        int want = (int) Math.min(buffer.remaining(), fileRemaining);
        ByteBuffer slice = buffer.slice(buffer.position(), want);
        while (slice.hasRemaining()) {
          if (channel.read(slice, consumed + slice.position()) < 0) {
            break;
          }
        }
        crc.update(slice.flip());
        consumed += want;
        buffer.position(buffer.position() + want).flip();
        if (buffer.remaining() < bytes) {
          throw new IOException(file + " is truncated");
        }
      }
      return buffer;
    }

    long position() {
      return consumed - buffer.remaining();
    }
  }
}
