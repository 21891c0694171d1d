package io.dynnibal.model.transformer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The output of a transformer's frozen bottom layers per text: T x H hidden states for a text of T
 * tokens, so that a text seen again runs only the trainable top layers. A text's states depend on
 * its tokens and on the frozen weights only (see {@link BertEncoderBlock#prefix}); the cache is
 * therefore keyed by the exact token ids, compared in full on every read, and one cache serves one
 * set of frozen weights, named by {@link FrozenPrefixCaches}' fingerprint.
 *
 * <p>Values live in memory-mapped files of up to {@value #SLAB_BYTES} bytes each, unlinked as soon
 * as they are mapped (nothing is left on disk, even after a kill), in half or single precision: the
 * operating system keeps them in its page cache, outside the Java heap, and can write them out
 * under memory pressure. Entries are never evicted; once the budget is spent, further texts are
 * simply not cached. Thread-safe: many operators of one JVM read and fill one cache.
 */
public final class FrozenPrefixCache implements AutoCloseable {
  static final int SLAB_BYTES = 1 << 28;

  private final int hidden;
  private final int bytesPerValue;
  private final long budgetBytes;
  private final Path directory;
  private final ConcurrentHashMap<TokenIds, Entry> entries = new ConcurrentHashMap<>();
  private final List<MappedByteBuffer> slabs = new ArrayList<>();
  private final AtomicLong hits = new AtomicLong();
  private final AtomicLong misses = new AtomicLong();
  private long used;
  private int slabUsed = SLAB_BYTES;
  private boolean closed;

  /**
   * @param hidden the encoder's width H
   * @param halfPrecision 2 bytes a value, else 4
   * @param budgetBytes the most bytes of values this cache holds
   * @param directory where its files go (the JVM's temporary directory when null)
   */
  public FrozenPrefixCache(int hidden, boolean halfPrecision, long budgetBytes, Path directory) {
    if (hidden < 1 || budgetBytes < 0) {
      throw new IllegalArgumentException("hidden " + hidden + ", budget " + budgetBytes);
    }
    this.hidden = hidden;
    this.bytesPerValue = halfPrecision ? 2 : 4;
    this.budgetBytes = budgetBytes;
    this.directory = directory != null ? directory : Path.of(System.getProperty("java.io.tmpdir"));
  }

  /**
   * The states of the text of {@code tokens} as {@code tokens.length * H} floats (token-major), or
   * null when this cache does not hold that exact text.
   */
  public float[] get(int[] tokens) {
    Entry e = entries.get(new TokenIds(tokens));
    if (e == null) {
      misses.incrementAndGet();
      return null;
    }
    hits.incrementAndGet();
    float[] out = new float[tokens.length * hidden];
    MappedByteBuffer slab = e.slab;
    int at = e.offset;
    if (bytesPerValue == 2) {
      for (int i = 0; i < out.length; i++, at += 2) {
        out[i] = HalfFloats.toFloat(slab.getShort(at));
      }
    } else {
      for (int i = 0; i < out.length; i++, at += 4) {
        out[i] = slab.getFloat(at);
      }
    }
    return out;
  }

  /**
   * Keeps {@code states} ({@code tokens.length * H} floats from {@code from}) for {@code tokens};
   * false when the budget is spent or the text is already held.
   */
  public boolean put(int[] tokens, float[] states, int from) {
    TokenIds key = new TokenIds(tokens.clone());
    if (entries.containsKey(key)) {
      return false;
    }
    int values = tokens.length * hidden;
    Entry e = reserve(values * bytesPerValue);
    if (e == null) {
      return false;
    }
    int at = e.offset;
    if (bytesPerValue == 2) {
      for (int i = 0; i < values; i++, at += 2) {
        e.slab.putShort(at, HalfFloats.fromFloat(states[from + i]));
      }
    } else {
      for (int i = 0; i < values; i++, at += 4) {
        e.slab.putFloat(at, states[from + i]);
      }
    }
    // Published only once written: a reader never sees a half-filled entry. A second writer of the
    // same text loses its reserved bytes, which the budget counts.
    return entries.putIfAbsent(key, e) == null;
  }

  private synchronized Entry reserve(int bytes) {
    if (closed || bytes > SLAB_BYTES || used + bytes > budgetBytes) {
      return null;
    }
    if (slabUsed + bytes > SLAB_BYTES) {
      long slabBytes = Math.min(SLAB_BYTES, Math.max(bytes, budgetBytes - used));
      slabs.add(map(slabBytes));
      slabUsed = 0;
    }
    MappedByteBuffer slab = slabs.get(slabs.size() - 1);
    if (slabUsed + bytes > slab.capacity()) {
      return null;
    }
    Entry e = new Entry(slab, slabUsed);
    slabUsed += bytes;
    used += bytes;
    return e;
  }

  private MappedByteBuffer map(long bytes) {
    try {
      Files.createDirectories(directory);
      Path file = Files.createTempFile(directory, "frozen-prefix-", ".cache");
      try (FileChannel channel =
          FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
        MappedByteBuffer slab = channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes);
        slab.order(ByteOrder.nativeOrder());
        return slab;
      } finally {
        Files.delete(file); // the mapping outlives both the channel and the name
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot map a frozen-prefix cache file in " + directory, e);
    }
  }

  /** Texts held. */
  public int size() {
    return entries.size();
  }

  /** Bytes of values held (what the budget counts). */
  public synchronized long bytes() {
    return used;
  }

  public long hits() {
    return hits.get();
  }

  public long misses() {
    return misses.get();
  }

  public int hidden() {
    return hidden;
  }

  /** Bytes a value takes: 2 (half precision) or 4. */
  public int bytesPerValue() {
    return bytesPerValue;
  }

  /** Stops caching and forgets every entry; the mappings go when no reader holds them. */
  @Override
  public synchronized void close() {
    closed = true;
    entries.clear();
    slabs.clear();
  }

  private record Entry(MappedByteBuffer slab, int offset) {}
}
