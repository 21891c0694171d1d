package io.dynnibal.negatives;

import ai.djl.Device;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import io.dynnibal.model.RowMajor;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

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
  private Map<String, Integer> memberById;

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

  /** Member ids, by member index. */
  public List<String> ids() {
    return ids;
  }

  public String id(int member) {
    return ids.get(member);
  }

  /** Floats held: the numerator of the paper's Mem % (as bytes, times four). */
  public long floats() {
    return (long) ids.size() * dimension;
  }

  /**
   * Per query, members drawn from the softmax (indices into the pool, in draw order, with repeats),
   * their scores (dot products), and {@code log sum exp(beta * score)} over the members drawn from.
   */
  public record Drawn(int[][] members, float[][] scores, double[] logMass) {}

  /** The member holding {@code id}, or -1. */
  public int memberOf(String id) {
    if (memberById == null) {
      Map<String, Integer> index = new HashMap<>(ids.size() * 2);
      for (int i = 0; i < ids.size(); i++) {
        index.put(ids.get(i), i);
      }
      memberById = index;
    }
    return memberById.getOrDefault(id, -1);
  }

  /**
   * For each query, {@code count} members drawn independently from the softmax {@code exp(beta *
   * score)} over all members but {@code excluded[q]} (a member index, or -1: none); none when no
   * member is left.
   */
  public Drawn sample(
      float[][] queries, int count, float beta, int[] excluded, SplittableRandom random) {
    int n = size();
    int[][] members = new int[queries.length][];
    float[][] scores = new float[queries.length][];
    double[] logMass = new double[queries.length];
    java.util.Arrays.fill(logMass, Double.NaN);
    float[] all = scoreAll(queries);
    double[] cumulative = new double[n];
    for (int q = 0; q < queries.length; q++) {
      int offset = q * n;
      float max = Float.NEGATIVE_INFINITY;
      for (int i = 0; i < n; i++) {
        if (i != excluded[q]) {
          max = Math.max(max, all[offset + i]);
        }
      }
      double total = 0;
      for (int i = 0; i < n; i++) {
        total += i == excluded[q] ? 0 : Math.exp(beta * (all[offset + i] - max));
        cumulative[i] = total;
      }
      if (!(total > 0)) {
        members[q] = new int[0];
        scores[q] = new float[0];
        continue;
      }
      logMass[q] = beta * max + Math.log(total);
      members[q] = new int[count];
      scores[q] = new float[count];
      for (int j = 0; j < count; j++) {
        double u = random.nextDouble() * total;
        int at = java.util.Arrays.binarySearch(cumulative, u);
        at = at >= 0 ? at + 1 : -at - 1; // the first member whose cumulative weight exceeds u
        at = Math.min(at, n - 1);
        while (at == excluded[q] || (at > 0 && cumulative[at] == cumulative[at - 1])) {
          at = at == n - 1 ? at - 1 : at + 1; // never a zero-weight member
        }
        members[q][j] = at;
        scores[q][j] = all[offset + at];
      }
    }
    return new Drawn(members, scores, logMass);
  }

  /** Every query's score against every member, query-major: {@code [q * size() + member]}. */
  public float[] scoreAll(float[][] queries) {
    float[] flat = RowMajor.flatten(queries, dimension);
    try (NDManager scope = manager.newSubManager()) {
      return scope
          .create(flat, new Shape(queries.length, dimension))
          .matMul(transposed)
          .toFloatArray();
    }
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
    float[] all = scoreAll(queries);
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
