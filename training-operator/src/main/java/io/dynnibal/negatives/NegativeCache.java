package io.dynnibal.negatives;

import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import io.dynnibal.model.RowMajor;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * A FIFO cache of recently trained targets with the full-dimension embeddings they had when they
 * entered (Lindgren et al. 2021, "Efficient training of retrieval models using negative cache").
 * Negatives are drawn from the softmax over the cache, {@code p(i | q) ∝ exp(scale · q·e_i)},
 * exactly, by the Gumbel-max trick; the embeddings are as stale as their age in the cache.
 *
 * <p>Invariant: at most {@code capacity} entries, ids distinct, ordered oldest first; adding an id
 * already cached replaces its entry and makes it the newest.
 *
 * @param <T> what the trainer needs to use a drawn target as a negative (its features)
 */
public final class NegativeCache<T> {
  /** One cached target. */
  public record Entry<T>(String id, T payload, float[] embedding) {}

  private final int capacity;
  private final int dimension;
  private final LinkedHashMap<String, Entry<T>> entries = new LinkedHashMap<>();

  public NegativeCache(int capacity, int dimension) {
    if (capacity < 1 || dimension < 1) {
      throw new IllegalArgumentException(
          "capacity and dimension must be positive, got " + capacity + ", " + dimension);
    }
    this.capacity = capacity;
    this.dimension = dimension;
  }

  public void add(String id, T payload, float[] embedding) {
    if (embedding.length != dimension) {
      throw new IllegalArgumentException(
          "embedding of " + id + " has dimension " + embedding.length + ", not " + dimension);
    }
    entries.remove(id);
    entries.put(id, new Entry<>(id, payload, embedding.clone()));
    if (entries.size() > capacity) {
      Iterator<String> oldest = entries.keySet().iterator();
      oldest.next();
      oldest.remove();
    }
  }

  public int size() {
    return entries.size();
  }

  public int capacity() {
    return capacity;
  }

  /** Floats held: the numerator of the paper's Mem % (as bytes, times four). */
  public long floats() {
    return (long) entries.size() * dimension;
  }

  /**
   * The entries, oldest first (what a checkpoint saves; adding them in this order restores the
   * cache).
   */
  public List<Entry<T>> entries() {
    return new ArrayList<>(entries.values());
  }

  /** A drawn entry and the probability the softmax gave it. */
  public record Draw<T>(Entry<T> entry, double probability) {}

  /**
   * For each query, {@code draws} independent draws from the softmax over the cache (the same entry
   * may be drawn more than once), each with its probability under that softmax. Scores come from
   * one DJL matrix product on {@code manager}'s device.
   *
   * @return per query, the draws
   */
  public List<List<Draw<T>>> sample(
      NDManager manager, float[][] queries, int draws, float scale, RandomGenerator random) {
    List<List<Draw<T>>> out = new ArrayList<>(queries.length);
    List<Entry<T>> members = entries();
    int n = members.size();
    if (n == 0 || draws == 0) {
      for (int q = 0; q < queries.length; q++) {
        out.add(List.of());
      }
      return out;
    }
    float[] cache =
        RowMajor.flatten(members.stream().map(Entry::embedding).toArray(float[][]::new), dimension);
    float[] flat = RowMajor.flatten(queries, dimension);
    float[] scores;
    try (NDManager scope = manager.newSubManager()) {
      scores =
          scope
              .create(flat, new Shape(queries.length, dimension))
              .matMul(scope.create(cache, new Shape(n, dimension)).transpose())
              .toFloatArray();
    }
    for (int q = 0; q < queries.length; q++) {
      double logMass = logMass(scores, q * n, n, scale);
      List<Draw<T>> drawn = new ArrayList<>(draws);
      for (int d = 0; d < draws; d++) {
        int i = gumbelMax(scores, q * n, n, scale, random);
        drawn.add(
            new Draw<>(members.get(i), Math.exp(scale * (double) scores[q * n + i] - logMass)));
      }
      out.add(drawn);
    }
    return out;
  }

  /** {@code log sum_i exp(scale * s_i)} over one query's scores. */
  private static double logMass(float[] scores, int offset, int n, float scale) {
    double max = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < n; i++) {
      max = Math.max(max, scale * (double) scores[offset + i]);
    }
    double sum = 0;
    for (int i = 0; i < n; i++) {
      sum += Math.exp(scale * (double) scores[offset + i] - max);
    }
    return max + Math.log(sum);
  }

  /**
   * argmax_i (scale · s_i + G_i) with G_i standard Gumbel noise: an exact draw from softmax(scale ·
   * s).
   */
  static int gumbelMax(float[] scores, int offset, int n, float scale, RandomGenerator random) {
    int best = 0;
    double bestValue = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < n; i++) {
      double u = random.nextDouble();
      double value =
          scale * (double) scores[offset + i] - Math.log(-Math.log(u == 0 ? Double.MIN_VALUE : u));
      if (value > bestValue) {
        bestValue = value;
        best = i;
      }
    }
    return best;
  }

  /** Restores entries saved by {@link #entries()} (oldest first). */
  public void restore(Iterable<Entry<T>> saved) {
    entries.clear();
    for (Entry<T> e : saved) {
      add(e.id(), e.payload(), e.embedding());
    }
  }
}
