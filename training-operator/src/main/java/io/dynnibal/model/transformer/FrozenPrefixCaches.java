package io.dynnibal.model.transformer;

import ai.djl.nn.Parameter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One {@link FrozenPrefixCache} per set of frozen weights in this JVM, so that every operator
 * holding the same frozen encoder (the shards that index and re-encode targets, the trainer, the
 * evaluation after training) shares what any of them computed. A set of weights is named by a
 * fingerprint of every value that the frozen layers read: two encoders share a cache only if their
 * frozen parts are equal, so a cache is never read for weights it was not computed with.
 *
 * <p>At most {@value #MAX_CACHES} caches are kept; a further one drops the least recently used (its
 * holders keep using it, nothing new finds it).
 */
public final class FrozenPrefixCaches {
  static final int MAX_CACHES = 4;

  private static final Map<Identity, FrozenPrefixCache> CACHES =
      new LinkedHashMap<>(8, 0.75f, true);

  private FrozenPrefixCaches() {}

  /**
   * The cache for frozen weights of {@code fingerprint} over {@code layers} layers, made with
   * {@code fastPath}'s budget and precision the first time it is asked for.
   */
  public static synchronized FrozenPrefixCache shared(
      long fingerprint, int layers, int hidden, FastPath fastPath, Path directory) {
    Identity id = new Identity(fingerprint, layers, hidden, fastPath.halfPrecision());
    FrozenPrefixCache cache = CACHES.get(id);
    if (cache == null) {
      cache =
          new FrozenPrefixCache(hidden, fastPath.halfPrecision(), fastPath.cacheBytes(), directory);
      CACHES.put(id, cache);
      if (CACHES.size() > MAX_CACHES) {
        var eldest = CACHES.keySet().iterator();
        eldest.next();
        eldest.remove();
      }
    }
    return cache;
  }

  /**
   * Forgets every cache (their holders keep theirs): the next encoder starts with an empty one. For
   * measurements that compare paths from the same start.
   */
  public static synchronized void forgetAll() {
    CACHES.clear();
  }

  /**
   * A 64-bit fingerprint of {@code words} (the word embeddings, row-major) and of {@code
   * parameters}' values in order, their shapes included.
   */
  public static long fingerprint(float[] words, List<Parameter> parameters) {
    long h = mix(0x9E3779B97F4A7C15L, words);
    for (Parameter p : parameters) {
      h = h * 31 + p.getArray().getShape().hashCode();
      h = mix(h, p.getArray().toFloatArray());
    }
    return h;
  }

  private static long mix(long h, float[] values) {
    h ^= values.length;
    for (float v : values) {
      h = (h ^ Float.floatToRawIntBits(v)) * 0x100000001B3L;
      h ^= h >>> 29;
    }
    return h;
  }

  private record Identity(long fingerprint, int layers, int hidden, boolean halfPrecision) {}
}
