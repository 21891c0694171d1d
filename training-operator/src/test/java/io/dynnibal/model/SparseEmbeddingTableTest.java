package io.dynnibal.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.model.features.Features;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SparseEmbeddingTableTest {
  private static final int ROWS = 50;
  private static final int DIM = 6;

  @Test
  void poolingIsTheWeightedSumOfRows() {
    SparseEmbeddingTable table = SparseEmbeddingTable.random(ROWS, DIM, 1);
    Features f = new Features(new int[] {3, 7, 41}, new float[] {0.5f, -0.25f, 2f});
    float[] out = new float[DIM + 2];
    table.pool(f, out, 2);
    float[] v = table.values();
    for (int k = 0; k < DIM; k++) {
      float expected = 0.5f * v[3 * DIM + k] - 0.25f * v[7 * DIM + k] + 2f * v[41 * DIM + k];
      assertEquals(expected, out[2 + k], 1e-6);
    }
  }

  @Test
  void accumulatedGradientMatchesFiniteDifferences() {
    // loss = <c, pool(f)> summed over two bags sharing a row: d loss / d row = sum of weight * c.
    SparseEmbeddingTable table = SparseEmbeddingTable.random(ROWS, DIM, 2);
    Features a = new Features(new int[] {1, 4}, new float[] {0.6f, 0.8f});
    Features b = new Features(new int[] {4, 9}, new float[] {1f, -0.5f});
    float[] c = {0.3f, -1f, 0.2f, 0.7f, -0.4f, 0.1f};
    table.accumulateGradient(a, c, 0);
    table.accumulateGradient(b, c, 0);
    assertEquals(3, table.pendingRows());
    float[] before = table.values().clone();
    double eps = 1e-3;
    for (int row : new int[] {1, 4, 9}) {
      float[] accumulated = table.pendingGradient(row);
      for (int k = 0; k < DIM; k++) {
        double analytic = accumulated[k];
        assertEquals(gradient(row, k, a, b, c), analytic, 1e-6);
        table.values()[row * DIM + k] += eps;
        double up = loss(table, a, b, c);
        table.values()[row * DIM + k] -= 2 * eps;
        double down = loss(table, a, b, c);
        table.values()[row * DIM + k] += eps;
        assertEquals(analytic, (up - down) / (2 * eps), 1e-3);
      }
    }
    table.adamStep(0.01f, 1f, AdamSettings.DEFAULT);
    for (int row : new int[] {1, 4, 9}) {
      for (int k = 0; k < DIM; k++) {
        float moved = table.values()[row * DIM + k] - before[row * DIM + k];
        double g = gradient(row, k, a, b, c);
        if (g != 0) {
          assertEquals(
              -Math.signum(g), Math.signum(moved), "row " + row + " dim " + k + " moved uphill");
        }
      }
    }
  }

  @Test
  void adamTouchesOnlyRowsWithAGradient() {
    SparseEmbeddingTable table = SparseEmbeddingTable.random(ROWS, DIM, 3);
    float[] before = table.values().clone();
    float[] g = new float[DIM];
    Arrays.fill(g, 1f);
    table.accumulateGradient(new Features(new int[] {5, 17}, new float[] {1f, 1f}), g, 0);
    table.adamStep(0.1f, 1f, AdamSettings.DEFAULT);
    for (int row = 0; row < ROWS; row++) {
      float[] was = Arrays.copyOfRange(before, row * DIM, (row + 1) * DIM);
      float[] now = Arrays.copyOfRange(table.values(), row * DIM, (row + 1) * DIM);
      if (row == 5 || row == 17) {
        assertNotEquals(Arrays.toString(was), Arrays.toString(now));
        // First Adam step moves each coordinate by the learning rate, against the gradient's sign.
        for (int k = 0; k < DIM; k++) {
          assertEquals(was[k] - 0.1f, now[k], 1e-5);
        }
      } else {
        assertArrayEquals(was, now, "row " + row + " changed without a gradient");
      }
    }
    assertEquals(0, table.pendingRows());
  }

  @Test
  void aRowFirstTouchedLateMovesByTheRateNotAMultipleOfIt() {
    // With the global step's bias correction a row first touched this late would move a multiple
    // of the rate.
    SparseEmbeddingTable table = SparseEmbeddingTable.random(ROWS, DIM, 7);
    float[] g = new float[DIM];
    Arrays.fill(g, 1f);
    for (int step = 1; step <= 725; step++) {
      table.accumulateGradient(new Features(new int[] {2}, new float[] {1f}), g, 0);
      table.adamStep(0.01f, 1f, AdamSettings.DEFAULT);
    }
    float[] before = table.values().clone();
    table.accumulateGradient(new Features(new int[] {2, 11}, new float[] {1f, 1f}), g, 0);
    table.adamStep(0.01f, 1f, AdamSettings.DEFAULT);
    for (int k = 0; k < DIM; k++) {
      assertEquals(-0.01f, table.values()[11 * DIM + k] - before[11 * DIM + k], 1e-6);
    }
    assertEquals(726, table.updateCounts()[2]);
    assertEquals(1, table.updateCounts()[11]);
    assertEquals(0, table.updateCounts()[3]);
  }

  @Test
  void theGradientScaleScalesWhatAdamSees() {
    // Adam is scale-invariant after the first step only through its moments: two tables fed the
    // same gradients, one pre-scaled by hand and one through gradientScale, end identical.
    SparseEmbeddingTable scaled = SparseEmbeddingTable.random(ROWS, DIM, 8);
    SparseEmbeddingTable byHand = SparseEmbeddingTable.random(ROWS, DIM, 8);
    Random random = new Random(9);
    for (int step = 0; step < 5; step++) {
      float[] g = new float[DIM];
      float[] quarter = new float[DIM];
      for (int k = 0; k < DIM; k++) {
        g[k] = (float) random.nextGaussian();
        quarter[k] = g[k] * 0.25f;
      }
      Features f = new Features(new int[] {1, 6}, new float[] {1f, 0.5f});
      scaled.accumulateGradient(f, g, 0);
      byHand.accumulateGradient(f, quarter, 0);
      assertEquals(
          byHand.pendingGradientSquaredNorm() * 16, scaled.pendingGradientSquaredNorm(), 1e-4);
      scaled.adamStep(0.01f, 0.25f, AdamSettings.DEFAULT);
      byHand.adamStep(0.01f, 1f, AdamSettings.DEFAULT);
    }
    assertArrayEquals(byHand.values(), scaled.values(), 1e-7f);
  }

  @Test
  void momentsWithoutUpdateCountsRestoreWithTheStepAsEveryTouchedRowsCount() {
    SparseEmbeddingTable table = SparseEmbeddingTable.random(ROWS, DIM, 10);
    float[] mean = new float[ROWS * DIM];
    float[] variance = new float[ROWS * DIM];
    variance[4 * DIM + 1] = 1e-4f; // row 4 was touched, the others never
    table.restoreMoments(mean, variance, null, 300);
    float[] counts = table.updateCounts();
    assertEquals(300, counts[4]);
    assertEquals(0, counts[5]);
  }

  @Test
  void manyRowsGrowTheGradientBufferWithoutLosingAny() {
    SparseEmbeddingTable table = SparseEmbeddingTable.random(20_000, 2, 4);
    Random random = new Random(5);
    int[] ids = random.ints(0, 20_000).distinct().limit(9_000).sorted().toArray();
    float[] weights = new float[ids.length];
    Arrays.fill(weights, 1f);
    table.accumulateGradient(new Features(ids, weights), new float[] {1f, -1f}, 0);
    assertEquals(ids.length, table.pendingRows());
  }

  @Test
  void anIdOutsideTheTableIsAClearError() {
    SparseEmbeddingTable table = SparseEmbeddingTable.random(ROWS, DIM, 6);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> table.pool(new Features(new int[] {ROWS}, new float[] {1f}), new float[DIM], 0));
    assertTrue(e.getMessage().contains("bucket count"), e.getMessage());
  }

  @Test
  void theSameSeedGivesTheSameTable() {
    assertArrayEquals(
        SparseEmbeddingTable.random(ROWS, DIM, 9).values(),
        SparseEmbeddingTable.random(ROWS, DIM, 9).values());
  }

  private static double loss(SparseEmbeddingTable table, Features a, Features b, float[] c) {
    float[] pa = new float[DIM];
    float[] pb = new float[DIM];
    table.pool(a, pa, 0);
    table.pool(b, pb, 0);
    double loss = 0;
    for (int k = 0; k < DIM; k++) {
      loss += c[k] * (pa[k] + pb[k]);
    }
    return loss;
  }

  private static double gradient(int row, int k, Features a, Features b, float[] c) {
    double g = 0;
    for (Features f : new Features[] {a, b}) {
      for (int j = 0; j < f.size(); j++) {
        if (f.ids()[j] == row) {
          g += f.weights()[j] * c[k];
        }
      }
    }
    return g;
  }
}
