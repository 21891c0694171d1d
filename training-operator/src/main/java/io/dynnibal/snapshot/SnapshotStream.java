package io.dynnibal.snapshot;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;

/**
 * The files of a parameter snapshot as one stream: what a trainer writes into a Flink checkpoint.
 *
 * <p>Layout: magic, version, file count, then per file its name and its bytes as chunks (a length,
 * then that many bytes), ended by a zero length. Chunking lets a file be streamed from the model as
 * it is serialised, without knowing its size first and without a copy of it in memory; the whole
 * stream is written with bulk writes and read with bulk reads.
 */
final class SnapshotStream {
  private static final int MAGIC = 0x534E5944; // "DYNS" read little endian
  private static final int VERSION = 1;
  static final int CHUNK = 1 << 20;

  private SnapshotStream() {}

  /** Writes {@code files} to {@code out}; flushes it, does not close it. */
  static void write(Map<String, SnapshotFiles.FileContent> files, OutputStream out)
      throws IOException {
    DataOutputStream data = new DataOutputStream(out);
    data.writeInt(MAGIC);
    data.writeInt(VERSION);
    data.writeInt(files.size());
    for (var file : files.entrySet()) {
      data.writeUTF(file.getKey());
      ChunkWriter chunks = new ChunkWriter(data);
      file.getValue().writeTo(channel(chunks));
      chunks.finish();
    }
    data.flush();
  }

  /**
   * Unpacks a stream {@link #write} made into files in {@code dir} (which must exist).
   *
   * @throws IOException when the stream is not a snapshot stream or ends early
   */
  static void unpack(InputStream in, Path dir) throws IOException {
    DataInputStream data = new DataInputStream(new BufferedInputStream(in, CHUNK));
    try {
      if (data.readInt() != MAGIC) {
        throw new IOException("not a parameter snapshot stream (bad magic number)");
      }
      int version = data.readInt();
      if (version != VERSION) {
        throw new IOException(
            "parameter snapshot stream version " + version + "; this build reads " + VERSION);
      }
      int count = data.readInt();
      byte[] buffer = new byte[CHUNK];
      for (int i = 0; i < count; i++) {
        String name = data.readUTF();
        if (name.isEmpty() || name.contains("/") || name.contains("\\") || name.startsWith(".")) {
          throw new IOException("parameter snapshot stream names a file '" + name + "'");
        }
        try (OutputStream file =
            Files.newOutputStream(dir.resolve(name), StandardOpenOption.CREATE_NEW)) {
          for (int n = data.readInt(); n != 0; n = data.readInt()) {
            if (n < 0 || n > CHUNK) {
              throw new IOException("corrupt parameter snapshot stream: chunk of " + n + " bytes");
            }
            data.readFully(buffer, 0, n);
            file.write(buffer, 0, n);
          }
        }
      }
    } catch (EOFException e) {
      throw new IOException("the parameter snapshot stream ends early (truncated checkpoint)", e);
    }
  }

  /**
   * A channel over {@code out} that hands a heap buffer's bytes over in one write ({@code
   * Channels.newChannel} copies them 8 KiB at a time).
   */
  private static WritableByteChannel channel(OutputStream out) {
    return new WritableByteChannel() {
      private boolean open = true;

      @Override
      public int write(ByteBuffer source) throws IOException {
        int n = source.remaining();
        if (source.hasArray()) {
          out.write(source.array(), source.arrayOffset() + source.position(), n);
          source.position(source.limit());
        } else {
          byte[] copy = new byte[n];
          source.get(copy);
          out.write(copy, 0, n);
        }
        return n;
      }

      @Override
      public boolean isOpen() {
        return open;
      }

      @Override
      public void close() {
        open = false;
      }
    };
  }

  /** Buffers a file's bytes and writes them as chunks of at most {@link #CHUNK} bytes. */
  private static final class ChunkWriter extends OutputStream {
    private final DataOutputStream out;
    private final byte[] buffer = new byte[64 << 10];
    private int buffered;

    ChunkWriter(DataOutputStream out) {
      this.out = out;
    }

    @Override
    public void write(int b) throws IOException {
      if (buffered == buffer.length) {
        drain();
      }
      buffer[buffered++] = (byte) b;
    }

    @Override
    public void write(byte[] bytes, int offset, int length) throws IOException {
      if (length <= buffer.length - buffered) {
        System.arraycopy(bytes, offset, buffer, buffered, length);
        buffered += length;
        return;
      }
      drain();
      // Large writes (a table's float buffer) go straight through, no copy.
      while (length > 0) {
        int n = Math.min(length, CHUNK);
        out.writeInt(n);
        out.write(bytes, offset, n);
        offset += n;
        length -= n;
      }
    }

    private void drain() throws IOException {
      if (buffered > 0) {
        out.writeInt(buffered);
        out.write(buffer, 0, buffered);
        buffered = 0;
      }
    }

    /** Writes what is buffered and the end-of-file marker. */
    void finish() throws IOException {
      drain();
      out.writeInt(0);
    }
  }
}
