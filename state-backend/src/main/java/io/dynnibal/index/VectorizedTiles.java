package io.dynnibal.index;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link TileScores} on the Vector API: sixteen rows (two vectors of eight floats) for eight
 * queries at a time where the processor has 32 vector registers (those of 512 bits), four
 * otherwise, the accumulators held in registers over all coordinates, each tile vector loaded once
 * for the group. Loaded only when the JVM has {@code jdk.incubator.vector}.
 *
 * <p>Eight lanes, as every kernel of the project, even where the processor has wider vectors: the
 * compiler turns these calls into vector instructions only where it knows the vector's class, and
 * for the calls inside the Vector API it learns that from what the whole JVM ran; a second width
 * anywhere (the wider kernels made the tiles' stores a call per vector after other kernels had run)
 * leaves that to chance.
 */
final class VectorizedTiles {
  private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_256;
  private static final int LANES = FLOATS.length();

  /**
   * Whether sixteen accumulators fit the registers: processors with 512-bit vectors have 32 of
   * them.
   */
  private static final boolean EIGHT_AT_ONCE = FloatVector.SPECIES_PREFERRED.vectorBitSize() >= 512;

  static {
    if (TileScores.ROWS % (2 * LANES) != 0) {
      throw new IllegalStateException(LANES + " float lanes do not divide a tile");
    }
  }

  private VectorizedTiles() {}

  static void dots(float[] tile, float[] scale, float[][] queries, float[][] out) {
    int q = 0;
    for (; EIGHT_AT_ONCE && q + 8 <= queries.length; q += 8) {
      eightQueries(tile, scale, queries, q, out);
    }
    for (; q + 4 <= queries.length; q += 4) {
      fourQueries(tile, scale, queries, q, out);
    }
    for (; q < queries.length; q++) {
      oneQuery(tile, scale, queries[q], out[q]);
    }
  }

  private static void eightQueries(
      float[] tile, float[] scale, float[][] queries, int q, float[][] out) {
    float[] x0 = queries[q];
    float[] x1 = queries[q + 1];
    float[] x2 = queries[q + 2];
    float[] x3 = queries[q + 3];
    float[] x4 = queries[q + 4];
    float[] x5 = queries[q + 5];
    float[] x6 = queries[q + 6];
    float[] x7 = queries[q + 7];
    int dim = x0.length;
    int rows = TileScores.ROWS;
    for (int r = 0; r < rows; r += 2 * LANES) {
      FloatVector a0 = FloatVector.zero(FLOATS);
      FloatVector a1 = a0;
      FloatVector b0 = a0;
      FloatVector b1 = a0;
      FloatVector c0 = a0;
      FloatVector c1 = a0;
      FloatVector d0 = a0;
      FloatVector d1 = a0;
      FloatVector e0 = a0;
      FloatVector e1 = a0;
      FloatVector f0 = a0;
      FloatVector f1 = a0;
      FloatVector g0 = a0;
      FloatVector g1 = a0;
      FloatVector h0 = a0;
      FloatVector h1 = a0;
      for (int j = 0, at = r; j < dim; j++, at += rows) {
        FloatVector t0 = FloatVector.fromArray(FLOATS, tile, at);
        FloatVector t1 = FloatVector.fromArray(FLOATS, tile, at + LANES);
        FloatVector x = FloatVector.broadcast(FLOATS, x0[j]);
        a0 = t0.fma(x, a0);
        a1 = t1.fma(x, a1);
        x = FloatVector.broadcast(FLOATS, x1[j]);
        b0 = t0.fma(x, b0);
        b1 = t1.fma(x, b1);
        x = FloatVector.broadcast(FLOATS, x2[j]);
        c0 = t0.fma(x, c0);
        c1 = t1.fma(x, c1);
        x = FloatVector.broadcast(FLOATS, x3[j]);
        d0 = t0.fma(x, d0);
        d1 = t1.fma(x, d1);
        x = FloatVector.broadcast(FLOATS, x4[j]);
        e0 = t0.fma(x, e0);
        e1 = t1.fma(x, e1);
        x = FloatVector.broadcast(FLOATS, x5[j]);
        f0 = t0.fma(x, f0);
        f1 = t1.fma(x, f1);
        x = FloatVector.broadcast(FLOATS, x6[j]);
        g0 = t0.fma(x, g0);
        g1 = t1.fma(x, g1);
        x = FloatVector.broadcast(FLOATS, x7[j]);
        h0 = t0.fma(x, h0);
        h1 = t1.fma(x, h1);
      }
      FloatVector s0 = FloatVector.fromArray(FLOATS, scale, r);
      FloatVector s1 = FloatVector.fromArray(FLOATS, scale, r + LANES);
      s0.mul(a0).intoArray(out[q], r);
      s1.mul(a1).intoArray(out[q], r + LANES);
      s0.mul(b0).intoArray(out[q + 1], r);
      s1.mul(b1).intoArray(out[q + 1], r + LANES);
      s0.mul(c0).intoArray(out[q + 2], r);
      s1.mul(c1).intoArray(out[q + 2], r + LANES);
      s0.mul(d0).intoArray(out[q + 3], r);
      s1.mul(d1).intoArray(out[q + 3], r + LANES);
      s0.mul(e0).intoArray(out[q + 4], r);
      s1.mul(e1).intoArray(out[q + 4], r + LANES);
      s0.mul(f0).intoArray(out[q + 5], r);
      s1.mul(f1).intoArray(out[q + 5], r + LANES);
      s0.mul(g0).intoArray(out[q + 6], r);
      s1.mul(g1).intoArray(out[q + 6], r + LANES);
      s0.mul(h0).intoArray(out[q + 7], r);
      s1.mul(h1).intoArray(out[q + 7], r + LANES);
    }
  }

  private static void fourQueries(
      float[] tile, float[] scale, float[][] queries, int q, float[][] out) {
    float[] x0 = queries[q];
    float[] x1 = queries[q + 1];
    float[] x2 = queries[q + 2];
    float[] x3 = queries[q + 3];
    int dim = x0.length;
    int rows = TileScores.ROWS;
    for (int r = 0; r < rows; r += 2 * LANES) {
      FloatVector a0 = FloatVector.zero(FLOATS);
      FloatVector a1 = a0;
      FloatVector b0 = a0;
      FloatVector b1 = a0;
      FloatVector c0 = a0;
      FloatVector c1 = a0;
      FloatVector d0 = a0;
      FloatVector d1 = a0;
      for (int j = 0, at = r; j < dim; j++, at += rows) {
        FloatVector t0 = FloatVector.fromArray(FLOATS, tile, at);
        FloatVector t1 = FloatVector.fromArray(FLOATS, tile, at + LANES);
        FloatVector x = FloatVector.broadcast(FLOATS, x0[j]);
        a0 = t0.fma(x, a0);
        a1 = t1.fma(x, a1);
        x = FloatVector.broadcast(FLOATS, x1[j]);
        b0 = t0.fma(x, b0);
        b1 = t1.fma(x, b1);
        x = FloatVector.broadcast(FLOATS, x2[j]);
        c0 = t0.fma(x, c0);
        c1 = t1.fma(x, c1);
        x = FloatVector.broadcast(FLOATS, x3[j]);
        d0 = t0.fma(x, d0);
        d1 = t1.fma(x, d1);
      }
      FloatVector s0 = FloatVector.fromArray(FLOATS, scale, r);
      FloatVector s1 = FloatVector.fromArray(FLOATS, scale, r + LANES);
      s0.mul(a0).intoArray(out[q], r);
      s1.mul(a1).intoArray(out[q], r + LANES);
      s0.mul(b0).intoArray(out[q + 1], r);
      s1.mul(b1).intoArray(out[q + 1], r + LANES);
      s0.mul(c0).intoArray(out[q + 2], r);
      s1.mul(c1).intoArray(out[q + 2], r + LANES);
      s0.mul(d0).intoArray(out[q + 3], r);
      s1.mul(d1).intoArray(out[q + 3], r + LANES);
    }
  }

  private static void oneQuery(float[] tile, float[] scale, float[] x, float[] out) {
    int rows = TileScores.ROWS;
    for (int r = 0; r < rows; r += LANES) {
      FloatVector a = FloatVector.zero(FLOATS);
      for (int j = 0, at = r; j < x.length; j++, at += rows) {
        a = FloatVector.fromArray(FLOATS, tile, at).fma(FloatVector.broadcast(FLOATS, x[j]), a);
      }
      FloatVector.fromArray(FLOATS, scale, r).mul(a).intoArray(out, r);
    }
  }

  static void widen(byte[] codes, int offset, float[] out) {
    for (int i = 0; i < out.length; i += LANES) {
      VectorizedKernels.codesAt(codes, offset + i).intoArray(out, i);
    }
  }

  static float max(float[] scores, float[] weight) {
    FloatVector max = FloatVector.broadcast(FLOATS, Float.NEGATIVE_INFINITY);
    for (int r = 0; r < TileScores.ROWS; r += LANES) {
      VectorMask<Float> weighted =
          FloatVector.fromArray(FLOATS, weight, r).compare(VectorOperators.GT, 0f);
      max = max.lanewise(VectorOperators.MAX, FloatVector.fromArray(FLOATS, scores, r), weighted);
    }
    return max.reduceLanes(VectorOperators.MAX);
  }

  static double expSum(float[] scores, float[] weight, float beta, float shift) {
    FloatVector sum = FloatVector.zero(FLOATS);
    for (int r = 0; r < TileScores.ROWS; r += LANES) {
      FloatVector w = FloatVector.fromArray(FLOATS, weight, r);
      FloatVector terms =
          FloatVector.fromArray(FLOATS, scores, r)
              .mul(beta)
              .sub(shift)
              .lanewise(VectorOperators.EXP)
              .mul(w);
      // A weightless row (padding, or a node holding no target) adds nothing, even as infinity.
      sum = sum.add(terms, w.compare(VectorOperators.GT, 0f));
    }
    return sum.reduceLanes(VectorOperators.ADD);
  }

  static int firstAbove(float[] scores, float[] weight, float bound, int from) {
    int r = from;
    for (; r < TileScores.ROWS && r % LANES != 0; r++) { // up to a whole vector
      if (weight[r] > 0 && scores[r] > bound) {
        return r;
      }
    }
    for (; r < TileScores.ROWS; r += LANES) {
      VectorMask<Float> above =
          FloatVector.fromArray(FLOATS, scores, r)
              .compare(VectorOperators.GT, bound)
              .and(FloatVector.fromArray(FLOATS, weight, r).compare(VectorOperators.GT, 0f));
      if (above.anyTrue()) {
        return r + above.firstTrue();
      }
    }
    return TileScores.ROWS;
  }
}
