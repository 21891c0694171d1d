package io.dynnibal.state;

import io.dynnibal.index.nystrom.CacheMap;
import java.util.Arrays;

/**
 * The maps that carry a shard key's stored cache vectors to the key's current model version, one
 * per version the vectors were written at (their <em>base</em>). A model update whose map applies
 * then costs one d' x d' product per base instead of a read and a write of every target in RocksDB:
 * the stored vectors stay where they were written, and what moves is this small value. A target's
 * current vector is {@code M_base z_stored}.
 *
 * <p>Invariants: {@code versions} are distinct and each has {@code counts > 0} targets stored at
 * it; {@code maps[i]} is the row-major map from {@code versions[i]} to the current version, null
 * meaning the identity (only for the current version). A Flink POJO (keyed value state).
 */
public class CacheBases {
  /**
   * How many bases a key keeps before the targets of all but the current one are rewritten at it.
   * Bases pile up only while targets are encoded between model updates; a handful bounds the
   * per-update cost and the state's size (each base holds a d' x d' map).
   */
  public static final int MAX_BASES = 8;

  public long[] versions = new long[0];
  public long[] counts = new long[0];
  public float[][] maps = new float[0][];

  public CacheBases() {}

  /** The map from {@code base} to the current version; null when it is the identity. */
  public float[] mapFrom(long base) {
    int i = indexOf(base);
    if (i < 0) {
      throw new IllegalStateException("no cache map from version " + base);
    }
    return maps[i];
  }

  public boolean has(long base) {
    return indexOf(base) >= 0;
  }

  public int size() {
    return versions.length;
  }

  /** {@code n} more targets stored at {@code base}, the current version (identity map). */
  void added(long base, long n) {
    int i = indexOf(base);
    if (i >= 0) {
      counts[i] += n;
      return;
    }
    versions = Arrays.copyOf(versions, versions.length + 1);
    counts = Arrays.copyOf(counts, counts.length + 1);
    maps = Arrays.copyOf(maps, maps.length + 1);
    versions[versions.length - 1] = base;
    counts[counts.length - 1] = n;
  }

  /** One target stored at {@code base} left (deleted, or rewritten at another base). */
  void removed(long base) {
    int i = indexOf(base);
    if (i < 0) {
      return;
    }
    if (--counts[i] > 0) {
      return;
    }
    int last = versions.length - 1;
    versions[i] = versions[last];
    counts[i] = counts[last];
    maps[i] = maps[last];
    versions = Arrays.copyOf(versions, last);
    counts = Arrays.copyOf(counts, last);
    maps = Arrays.copyOf(maps, last);
  }

  /** Every base moves on by {@code next}: {@code M_base <- next * M_base}. */
  void compose(CacheMap next) {
    int d = next.dimension();
    float[] a = next.rowMajor();
    for (int i = 0; i < maps.length; i++) {
      maps[i] = maps[i] == null ? a.clone() : product(a, maps[i], d);
    }
  }

  /**
   * Moves stored vectors to the current version, each base's {@link CacheMap} built once: one per
   * pass over many targets (the value's maps do not change during it).
   */
  Mover mover() {
    return new Mover();
  }

  final class Mover {
    private final java.util.Map<Long, CacheMap> built = new java.util.HashMap<>();
    private float[] scratch;

    /** {@code stored} (written at {@code base}) moved to the current version, in place. */
    float[] moveInPlace(long base, float[] stored) {
      CacheMap map =
          built.computeIfAbsent(
              base, v -> mapFrom(v) == null ? null : new CacheMap(stored.length, mapFrom(v)));
      if (map != null) {
        if (scratch == null || scratch.length != stored.length) {
          scratch = new float[stored.length];
        }
        map.applyInPlace(stored, scratch);
      }
      return stored;
    }
  }

  /** Row-major {@code a b} of two d x d matrices, accumulated in double. */
  static float[] product(float[] a, float[] b, int d) {
    float[] out = new float[d * d];
    double[] row = new double[d];
    for (int i = 0; i < d; i++) {
      Arrays.fill(row, 0);
      for (int k = 0; k < d; k++) {
        double aik = a[i * d + k];
        int bk = k * d;
        for (int j = 0; j < d; j++) {
          row[j] += aik * b[bk + j];
        }
      }
      for (int j = 0; j < d; j++) {
        out[i * d + j] = (float) row[j];
      }
    }
    return out;
  }

  private int indexOf(long base) {
    for (int i = 0; i < versions.length; i++) {
      if (versions[i] == base) {
        return i;
      }
    }
    return -1;
  }
}
