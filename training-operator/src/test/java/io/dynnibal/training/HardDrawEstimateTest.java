package io.dynnibal.training;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.negatives.Inclusions;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The balance heuristic against the exact normaliser: one query, its positive target 0, hard draws
 * from the exact softmax over the other targets and uniform draws beside them, as a step has.
 */
class HardDrawEstimateTest {
  private static final int TARGETS = 400;
  private static final int UNIFORM = 16;
  private static final int HARD = 4;
  private static final int TRIALS = 20_000;

  @Test
  void balanceEstimatesTheNormaliserWithoutBiasWhereLogqCountsTheHardRegionTwice() {
    Random random = new Random(5);
    double[] logits = new double[TARGETS];
    for (int y = 0; y < TARGETS; y++) {
      logits[y] = 2 * random.nextGaussian();
    }
    double exact = 0;
    for (int y = 1; y < TARGETS; y++) {
      exact += Math.exp(logits[y]);
    }
    double[] probability = new double[TARGETS];
    for (int y = 1; y < TARGETS; y++) {
      probability[y] = Math.exp(logits[y]) / exact;
    }
    double rate = SamplingCorrection.uniformRate(UNIFORM, TARGETS);
    double logqSum = 0;
    double logqSquares = 0;
    double balanceSum = 0;
    double balanceSquares = 0;
    double solvedSum = 0;
    double solvedSquares = 0;
    for (int trial = 0; trial < TRIALS; trial++) {
      Set<String> hard = new LinkedHashSet<>();
      for (int d = 0; d < HARD; d++) {
        hard.add(Integer.toString(draw(probability, random)));
      }
      Inclusions inclusions = new Inclusions();
      for (String id : hard) {
        inclusions.drawn(id, probability[Integer.parseInt(id)], HARD);
      }
      List<String> negatives = new ArrayList<>(hard);
      for (int d = 0; d < UNIFORM; d++) {
        negatives.add(Integer.toString(random.nextInt(TARGETS)));
      }
      List<String> positives = List.of("0");
      float[] logq =
          SamplingCorrection.offsets(positives, negatives, id -> rate + inclusions.of(id));
      int c = 1 + negatives.size();
      float[] row = new float[c];
      boolean[] estimated = new boolean[c];
      for (int j = 0; j < c; j++) {
        String id = j == 0 ? "0" : negatives.get(j - 1);
        row[j] = (float) logits[Integer.parseInt(id)];
        estimated[j] = j > 0 && !inclusions.contains(id);
      }
      float[] balance =
          new HardDrawEstimate(new float[] {(float) Math.log(exact)}, estimated, HARD)
              .apply(logq, row, SampledSoftmaxLoss.mask(positives, negatives));
      // Self-normalised: no mass given, the hard draws counted only through the logits.
      float[] uniformOnly = SamplingCorrection.offsets(positives, negatives, id -> rate);
      boolean[] every = new boolean[c];
      java.util.Arrays.fill(every, 1, c, true);
      float[] solved =
          new HardDrawEstimate(new float[] {0f}, every, HARD, true)
              .apply(uniformOnly, row, SampledSoftmaxLoss.mask(positives, negatives));
      double l = correctedSum(row, negatives, logq) / exact;
      double b = correctedSum(row, negatives, balance) / exact;
      double n = correctedSum(row, negatives, solved) / exact;
      solvedSum += n;
      solvedSquares += n * n;
      logqSum += l;
      logqSquares += l * l;
      balanceSum += b;
      balanceSquares += b * b;
    }
    double logqMean = logqSum / TRIALS;
    double balanceMean = balanceSum / TRIALS;
    assertEquals(1, balanceMean, 0.03, "balance: unbiased");
    double solvedMean = solvedSum / TRIALS;
    double solvedSpread = Math.sqrt(solvedSquares / TRIALS - solvedMean * solvedMean);
    // A ratio estimator, so biased (+11 % here, its fixed point), but far less than logq (+41 %).
    assertEquals(1.1, solvedMean, 0.05, "balance against a solved normaliser");
    assertTrue(logqMean > 1.2, "logq counts the hard region twice: " + logqMean);
    double logqSpread = Math.sqrt(logqSquares / TRIALS - logqMean * logqMean);
    double balanceSpread = Math.sqrt(balanceSquares / TRIALS - balanceMean * balanceMean);
    assertTrue(
        balanceSpread < logqSpread / 2,
        "a uniform hit on a hard target no longer weighs a hundred times over: spread "
            + balanceSpread
            + " against "
            + logqSpread);
    assertTrue(solvedSpread < 0.75 * logqSpread, "solved: spread " + solvedSpread);
  }

  @Test
  void aQueryNeverCountsItsOwnPositiveNorDoesARowWithoutAMass() {
    // Rows: query 0 (positive "a") drew from a softmax of mass e^0 = 1, query 1 drew nothing known.
    List<String> positives = List.of("a", "b");
    List<String> negatives = List.of("a", "x");
    float[] mask = SampledSoftmaxLoss.mask(positives, negatives);
    float[] logits = {0, -1, 0, -2, -1, -1, -1, -1}; // 2 x 4, row-major
    float[] offsets = {0, 0, 0, 0};
    boolean[] estimated = {true, true, true, true};
    float[] out =
        new HardDrawEstimate(new float[] {0f, Float.NaN}, estimated, 1)
            .apply(offsets, logits, mask);
    // Column 0 ("a") is query 0's own positive, column 2 ("a" again) masked in row 0: no chance.
    assertEquals(0f, out[0], 1e-6f);
    assertEquals(0f, out[2], 1e-6f);
    // Column 1 ("b"): query 0 draws it with e^-1; column 3 ("x"): with e^-2.
    assertEquals((float) -Math.log(1 + Math.exp(-1)), out[1], 1e-6f);
    assertEquals((float) -Math.log(1 + Math.exp(-2)), out[3], 1e-6f);
  }

  @Test
  void columnsNotEstimatedKeepTheirOffsetsAndACertainDrawSaturates() {
    List<String> positives = List.of("a");
    List<String> negatives = List.of("x", "y");
    float[] offsets = {1f, 2f, 3f};
    float[] logits = {0f, 5f, 5f}; // above the mass of 1: the draws would include them for sure
    float[] out =
        new HardDrawEstimate(new float[] {0f}, new boolean[] {false, false, true}, 3)
            .apply(offsets, logits, SampledSoftmaxLoss.mask(positives, negatives));
    assertArrayEquals(new float[] {1f, 2f, (float) -Math.log(Math.exp(-3) + 1)}, out, 1e-6f);
  }

  @Test
  void shapesThatDoNotMatchAreRefused() {
    assertThrows(
        IllegalArgumentException.class,
        () -> new HardDrawEstimate(new float[] {0f}, new boolean[] {true}, 0));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            new HardDrawEstimate(new float[] {0f}, new boolean[] {true, true}, 1)
                .apply(new float[] {0f, 0f}, new float[] {0f}, new float[] {0f}));
  }

  private static int draw(double[] probability, Random random) {
    double u = random.nextDouble();
    for (int y = 1; y < probability.length; y++) {
      u -= probability[y];
      if (u < 0) {
        return y;
      }
    }
    return probability.length - 1;
  }

  /** The negatives' corrected sum, the positive's columns left out (the loss masks them). */
  private static double correctedSum(float[] row, List<String> negatives, float[] offsets) {
    double sum = 0;
    for (int j = 0; j < negatives.size(); j++) {
      if (!negatives.get(j).equals("0")) {
        sum += Math.exp(row[1 + j] + offsets[1 + j]);
      }
    }
    return sum;
  }
}
