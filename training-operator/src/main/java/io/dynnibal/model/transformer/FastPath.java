package io.dynnibal.model.transformer;

import java.io.Serializable;

/**
 * How a transformer tower with frozen bottom layers saves work; every part changes speed, never the
 * model a step trains (up to the cache's precision).
 *
 * @param cacheMegabytes budget of the {@link FrozenPrefixCache} (the frozen layers' output per
 *     text, in memory-mapped files): a text the cache holds runs only the trainable layers. 0: no
 *     cache. Used only when some layers are frozen.
 * @param halfPrecision whether the cache stores half-precision values (2 bytes each) or single (4)
 * @param lengthBuckets a training step's texts of each side run through the encoder in this many
 *     groups of similar length, each padded only to its own longest (1: one group)
 */
public record FastPath(int cacheMegabytes, boolean halfPrecision, int lengthBuckets)
    implements Serializable {
  /** The encoder as it is: no cache, one group. */
  public static final FastPath OFF = new FastPath(0, true, 1);

  public FastPath {
    if (cacheMegabytes < 0) {
      throw new IllegalArgumentException("cacheMegabytes must be >= 0, got " + cacheMegabytes);
    }
    if (lengthBuckets < 1) {
      throw new IllegalArgumentException("lengthBuckets must be >= 1, got " + lengthBuckets);
    }
  }

  /** The cache's budget in bytes. */
  public long cacheBytes() {
    return (long) cacheMegabytes << 20;
  }
}
