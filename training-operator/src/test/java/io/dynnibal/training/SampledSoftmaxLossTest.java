package io.dynnibal.training;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import io.dynnibal.model.TorchRuntime;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class SampledSoftmaxLossTest {
  private static NDManager manager;

  @BeforeAll
  static void start() {
    manager = TorchRuntime.engine().newBaseManager();
  }

  @AfterAll
  static void stop() {
    manager.close();
  }

  @Test
  void theQuerysOwnPositiveAmongTheNegativesIsMasked() {
    float[] mask = SampledSoftmaxLoss.mask(List.of("a", "b", "a"), List.of("x", "b", "a"));
    // columns: a b a | x b a
    int c = 6;
    assertMasked(
        mask, c, 0, 2,
        5); // query 0 (positive a): the other a in the batch and the a among negatives
    assertMasked(mask, c, 1, 4); // query 1 (positive b): b among negatives
    assertMasked(mask, c, 2, 0, 5); // query 2 (positive a): the first a and the a among negatives
    assertEquals(5, SampledSoftmaxLoss.maskedCount(mask));
  }

  @Test
  void columnOffsetsApplyOffTheDiagonalAndNeverUnmask() {
    float[] offsets = {1, 2, 3, 4, 5, 6};
    float[] mask = SampledSoftmaxLoss.mask(List.of("a", "b", "a"), List.of("x", "b", "a"), offsets);
    int c = 6;
    for (int i = 0; i < 3; i++) {
      for (int j = 0; j < c; j++) {
        float expected = j == i ? 0 : isMasked(i, j) ? SampledSoftmaxLoss.MASKED : offsets[j];
        assertEquals(expected, mask[i * c + j], "row " + i + " column " + j);
      }
    }
    assertEquals(5, SampledSoftmaxLoss.maskedCount(mask));
  }

  /** The masked cells of {@link #theQuerysOwnPositiveAmongTheNegativesIsMasked}'s batch. */
  private static boolean isMasked(int row, int column) {
    return switch (row) {
      case 0 -> column == 2 || column == 5;
      case 1 -> column == 4;
      default -> column == 0 || column == 5;
    };
  }

  @Test
  void lossEqualsTheExactSoftmaxCrossEntropy() {
    Random random = new Random(11);
    int b = 4;
    int n = 3;
    int d = 5;
    float[][] q = unitRows(random, b, d);
    float[][] t = unitRows(random, b + n, d);
    List<String> positives = List.of("p0", "p1", "p2", "p3");
    List<String> negatives = List.of("n0", "n1", "n2");
    float beta = 20f;
    double expected = 0;
    for (int i = 0; i < b; i++) {
      double[] logits = new double[b + n];
      double max = Double.NEGATIVE_INFINITY;
      for (int j = 0; j < b + n; j++) {
        logits[j] = beta * dot(q[i], t[j]);
        max = Math.max(max, logits[j]);
      }
      double sum = 0;
      for (double l : logits) {
        sum += Math.exp(l - max);
      }
      expected += -(logits[i] - max - Math.log(sum));
    }
    expected /= b;
    assertEquals(expected, loss(q, t, positives, negatives, beta), 1e-3 * Math.max(1, expected));
  }

  @Test
  void aMaskedDuplicateOfThePositiveCountsAsIfItWereAbsent() {
    Random random = new Random(12);
    float[][] q = unitRows(random, 2, 4);
    float[][] t = unitRows(random, 3, 4);
    // Candidate 2 is a copy of query 0's positive (same id "p0", same vector).
    double maskedQ0 =
        loss(
            new float[][] {q[0]},
            new float[][] {t[0], t[1], t[0]},
            List.of("p0"),
            List.of("x", "p0"),
            20f);
    double absentQ0 =
        loss(new float[][] {q[0]}, new float[][] {t[0], t[1]}, List.of("p0"), List.of("x"), 20f);
    assertEquals(absentQ0, maskedQ0, 1e-5);
    // With the query on its positive (softmax dominated by it), an unmasked copy adds about log 2
    // to the loss.
    float[][] aligned = {t[0]};
    double unmasked =
        loss(aligned, new float[][] {t[0], t[1], t[0]}, List.of("p0"), List.of("x", "y"), 20f);
    double maskedAligned =
        loss(aligned, new float[][] {t[0], t[1], t[0]}, List.of("p0"), List.of("x", "p0"), 20f);
    assertEquals(Math.log(2), unmasked - maskedAligned, 0.05);
  }

  private static double loss(
      float[][] q, float[][] t, List<String> positives, List<String> negatives, float beta) {
    try (NDManager scope = manager.newSubManager()) {
      NDArray qa = scope.create(flat(q), new Shape(q.length, q[0].length));
      NDArray ta = scope.create(flat(t), new Shape(t.length, t[0].length));
      return SampledSoftmaxLoss.loss(
              qa, ta, SampledSoftmaxLoss.mask(positives, negatives), beta, scope)
          .getFloat();
    }
  }

  private static void assertMasked(float[] mask, int columns, int row, int... maskedColumns) {
    for (int j = 0; j < columns; j++) {
      boolean expected = false;
      for (int m : maskedColumns) {
        expected |= m == j;
      }
      assertEquals(expected, mask[row * columns + j] != 0f, "row " + row + " column " + j);
    }
  }

  private static float[][] unitRows(Random random, int n, int d) {
    float[][] rows = new float[n][d];
    for (float[] row : rows) {
      double norm = 0;
      for (int k = 0; k < d; k++) {
        row[k] = (float) random.nextGaussian();
        norm += row[k] * row[k];
      }
      for (int k = 0; k < d; k++) {
        row[k] /= (float) Math.sqrt(norm);
      }
    }
    return rows;
  }

  private static float[] flat(float[][] rows) {
    float[] flat = new float[rows.length * rows[0].length];
    for (int i = 0; i < rows.length; i++) {
      System.arraycopy(rows[i], 0, flat, i * rows[0].length, rows[0].length);
    }
    return flat;
  }

  private static double dot(float[] a, float[] b) {
    double s = 0;
    for (int i = 0; i < a.length; i++) {
      s += (double) a[i] * b[i];
    }
    return s;
  }
}
