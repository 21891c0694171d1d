package io.dynnibal.index;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link TileScores} on the Vector API at the processor's widest floats: sixteen rows (two vectors
 * at 256 bits) for four queries at a time, eight accumulators held in registers over all
 * coordinates, each tile vector loaded once for the four. Loaded only when the JVM has {@code
 * jdk.incubator.vector}.
 */
final class VectorizedTiles {
  private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_PREFERRED;
  private static final int LANES = FLOATS.length();

  static {
    if (TileScores.ROWS % (2 * LANES) != 0) {
      throw new IllegalStateException(LANES + " float lanes do not divide a tile");
    }
  }

  private VectorizedTiles() {}

  static void dots(float[] tile, float[] scale, float[][] queries, float[][] out) {
    int q = 0;
    for (; q + 4 <= queries.length; q += 4) {
      fourQueries(tile, scale, queries, q, out);
    }
    for (; q < queries.length; q++) {
      oneQuery(tile, scale, queries[q], out[q]);
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
