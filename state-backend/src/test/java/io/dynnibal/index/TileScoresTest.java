package io.dynnibal.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TileScoresTest {
  private static final int ROWS = TileScores.ROWS;

  /**
   * Eight or four queries at a time and the rest alone, at any dimension: every row's score has the
   * scalar loop's bits, so a query scores the same in any batch and on any JVM.
   */
  @ParameterizedTest
  @ValueSource(ints = {1, 3, 4, 5, 8, 9, 13, 17})
  void theVectorKernelIsTheScalarLoopBitForBit(int queryCount) {
    assumeTrue(VectorMath.VECTORIZED);
    SplittableRandom random = new SplittableRandom(queryCount);
    for (int dim : new int[] {1, 7, 64, 65}) {
      float[] tile = floats(dim * ROWS, random);
      float[] scale = floats(ROWS, random);
      float[][] queries = new float[queryCount][];
      for (int q = 0; q < queryCount; q++) {
        queries[q] = floats(dim, random);
      }
      float[][] vector = new float[queryCount][ROWS];
      float[][] scalar = new float[queryCount][ROWS];
      TileScores.dots(tile, scale, queries, vector);
      TileScores.scalarDots(tile, scale, queries, scalar);
      for (int q = 0; q < queryCount; q++) {
        for (int r = 0; r < ROWS; r++) {
          assertEquals(
              Float.floatToIntBits(scalar[q][r]),
              Float.floatToIntBits(vector[q][r]),
              "dim " + dim + ", query " + q + ", row " + r);
        }
      }
    }
  }

  /**
   * Codes widen to the floats they are, on the Vector API as in the scalar loop, from any offset.
   */
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 37})
  void codesWidenToTheirValues(int offset) {
    byte[] codes = new byte[offset + 3 * ROWS];
    new java.util.Random(offset).nextBytes(codes);
    float[] vector = new float[3 * ROWS];
    float[] scalar = new float[3 * ROWS];
    TileScores.widen(codes, offset, vector);
    TileScores.scalarWiden(codes, offset, scalar);
    for (int i = 0; i < vector.length; i++) {
      assertEquals(codes[offset + i], vector[i], "code " + i);
      assertEquals(codes[offset + i], scalar[i], "code " + i);
    }
  }

  /** The maximum and the sum of exponentials see only the rows of positive weight. */
  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3})
  void weightlessRowsCountForNothing(int seed) {
    SplittableRandom random = new SplittableRandom(seed);
    float[] scores = floats(ROWS, random);
    float[] weight = new float[ROWS];
    float max = Float.NEGATIVE_INFINITY;
    double sum = 0;
    float beta = 4;
    float shift = 1.5f;
    for (int r = 0; r < ROWS; r++) {
      weight[r] = random.nextInt(3); // a third of the rows weightless
      if (weight[r] == 0) {
        scores[r] = 1e6f; // would dominate either figure, and overflow the exponential
      } else {
        max = Math.max(max, scores[r]);
        sum += weight[r] * Math.exp((double) beta * scores[r] - shift);
      }
    }
    assertEquals(max, TileScores.max(scores, weight));
    assertEquals(max, TileScores.scalarMax(scores, weight));
    assertEquals(sum, TileScores.expSum(scores, weight, beta, shift), sum * 1e-5);
    assertEquals(sum, TileScores.scalarExpSum(scores, weight, beta, shift), sum * 1e-5);
    assertEquals(Float.NEGATIVE_INFINITY, TileScores.max(scores, new float[ROWS]));
    assertEquals(0, TileScores.expSum(scores, new float[ROWS], beta, shift));
  }

  /** The first weighted row above a bound, from any row on, as the scalar loop finds it. */
  @ParameterizedTest
  @ValueSource(ints = {4, 5})
  void theFirstRowAboveABoundIsTheScalarLoops(int seed) {
    SplittableRandom random = new SplittableRandom(seed);
    float[] scores = floats(ROWS, random);
    float[] weight = new float[ROWS];
    for (int r = 0; r < ROWS; r++) {
      weight[r] = random.nextInt(2);
    }
    for (float bound : new float[] {-2f, 0.5f, 0.99f, 2f}) {
      for (int from = 0; from <= ROWS; from++) {
        int found = TileScores.firstAbove(scores, weight, bound, from);
        assertEquals(TileScores.scalarFirstAbove(scores, weight, bound, from), found);
        for (int r = from; r < found; r++) {
          assertTrue(weight[r] == 0 || scores[r] <= bound, "row " + r + " skipped");
        }
      }
    }
  }

  private static float[] floats(int n, SplittableRandom random) {
    float[] out = new float[n];
    for (int i = 0; i < n; i++) {
      out[i] = (float) random.nextDouble(-1, 1);
    }
    return out;
  }
}
