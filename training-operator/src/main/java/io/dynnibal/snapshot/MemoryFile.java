package io.dynnibal.snapshot;

import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.util.ArrayList;
import java.util.List;

/**
 * A file written to memory in fixed chunks, then copied once into an array of its exact size: what
 * a trainer's parameters become for a checkpoint.
 *
 * <p>Why not a {@code ByteArrayOutputStream}: it doubles its buffer as it grows and copies it again
 * for {@code toByteArray}, so a file of N bytes passes through up to 3N of live heap at once. With
 * the trainer's tables in the hundreds of MB, that transient was what ran a TaskManager out of heap
 * in a checkpoint (the soak's one unplanned failure). Here the peak is N of chunks plus the N-byte
 * result, and nothing is allocated twice.
 */
final class MemoryFile implements WritableByteChannel {
  static final int CHUNK = 4 << 20;

  private final List<byte[]> chunks = new ArrayList<>();
  private int inLast = CHUNK; // bytes used in the last chunk
  private long size;
  private boolean open = true;

  @Override
  public int write(ByteBuffer source) {
    int written = source.remaining();
    while (source.hasRemaining()) {
      if (inLast == CHUNK) {
        chunks.add(new byte[CHUNK]);
        inLast = 0;
      }
      int n = Math.min(source.remaining(), CHUNK - inLast);
      source.get(chunks.get(chunks.size() - 1), inLast, n);
      inLast += n;
    }
    size += written;
    return written;
  }

  /** What was written, in one array; the chunks are released as they are copied. */
  byte[] toByteArray() {
    if (size > Integer.MAX_VALUE - 8) {
      throw new IllegalStateException(
          "a snapshot file of " + size + " bytes does not fit an array");
    }
    byte[] out = new byte[(int) size];
    int at = 0;
    for (int i = 0; i < chunks.size(); i++) {
      int n = i == chunks.size() - 1 ? inLast : CHUNK;
      System.arraycopy(chunks.get(i), 0, out, at, n);
      chunks.set(i, null);
      at += n;
    }
    chunks.clear();
    inLast = CHUNK;
    size = 0;
    return out;
  }

  @Override
  public boolean isOpen() {
    return open;
  }

  @Override
  public void close() {
    open = false;
  }
}
