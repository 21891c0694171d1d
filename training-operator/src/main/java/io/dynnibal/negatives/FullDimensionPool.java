package io.dynnibal.negatives;

import ai.djl.Device;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import io.dynnibal.model.RowMajor;
import java.util.List;

/**
 * Targets held at the encoder's full dimension for brute-force mining: the exhaustive oracle (every
 * target) and stochastic negative mining (a random fraction), the paper's accelerator-memory
 * baselines. The vectors are one DJL matrix; a batch of queries is scored by one matrix product and
 * each query keeps its k highest-scoring members.
 *
 * <p>Invariant: member i's vector is the one given when the pool was built; a pool is never updated
 * in place. Refreshing means building a new pool with newly encoded vectors, and the staleness in
 * between is part of what these baselines are.
 */
public final class FullDimensionPool implements AutoCloseable {
  /**
   * Per query, its best members (indices into the pool) and their scores (dot products), best
   * first.
   */
  public record TopK(int[][] members, float[][] scores) {}

  private final List<String> ids;
  private final int dimension;
  private final NDManager manager;
  private final NDArray transposed;

  private FullDimensionPool(
      List<String> ids, int dimension, NDManager manager, NDArray transposed) {
    this.ids = ids;
    this.dimension = dimension;
    this.manager = manager;
    this.transposed = transposed;
  }

  /** A pool of {@code ids.get(i)} at {@code vectors[i]}; all vectors of one dimension. */
  public static FullDimensionPool of(List<String> ids, float[][] vectors, int dimension) {
    if (ids.size() != vectors.length) {
      throw new IllegalArgumentException(ids.size() + " ids but " + vectors.length + " vectors");
    }
    float[] flat = RowMajor.flatten(vectors, dimension);
    NDManager manager = NDManager.newBaseManager(Device.cpu());
    try {
      NDArray transposed = null;
      if (vectors.length > 0) {
        // Built in a scope that is closed at once: only the contiguous transposed copy stays with
        // the pool.
        try (NDManager scope = manager.newSubManager()) {
          transposed =
              scope.create(flat, new Shape(vectors.length, dimension)).transpose().duplicate();
          transposed.attach(manager);
        }
      }
      return new FullDimensionPool(List.copyOf(ids), dimension, manager, transposed);
    } catch (RuntimeException e) {
      manager.close();
      throw e;
    }
  }

  public int size() {
    return ids.size();
  }

  public String id(int member) {
    return ids.get(member);
  }

  /** Floats held: the numerator of the paper's Mem % (as bytes, times four). */
  public long floats() {
    return (long) ids.size() * dimension;
  }

  /**
   * For each query, its {@code min(k, size)} highest-scoring members, best first; equal scores keep
   * the lower member index first, so results are deterministic.
   */
  public TopK topK(float[][] queries, int k) {
    int n = size();
    int keep = Math.min(k, n);
    int[][] members = new int[queries.length][keep];
    float[][] scores = new float[queries.length][keep];
    if (keep == 0 || queries.length == 0) {
      return new TopK(members, scores);
    }
    float[] flat = RowMajor.flatten(queries, dimension);
    float[] all;
    try (NDManager scope = manager.newSubManager()) {
      all =
          scope
              .create(flat, new Shape(queries.length, dimension))
              .matMul(transposed)
              .toFloatArray();
    }
    for (int q = 0; q < queries.length; q++) {
      int[] best = members[q];
      float[] bestScores = scores[q];
      java.util.Arrays.fill(bestScores, Float.NEGATIVE_INFINITY);
      java.util.Arrays.fill(best, -1);
      int offset = q * n;
      for (int i = 0; i < n; i++) {
        float s = all[offset + i];
        if (s > bestScores[keep - 1] || best[keep - 1] < 0) {
          // Insertion into the short sorted list (k is a handful): strictly greater moves up, so
          // ties keep index order.
          int at = keep - 1;
          while (at > 0 && (best[at - 1] < 0 || s > bestScores[at - 1])) {
            bestScores[at] = bestScores[at - 1];
            best[at] = best[at - 1];
            at--;
          }
          bestScores[at] = s;
          best[at] = i;
        }
      }
    }
    return new TopK(members, scores);
  }

  @Override
  public void close() {
    manager.close();
  }
}
