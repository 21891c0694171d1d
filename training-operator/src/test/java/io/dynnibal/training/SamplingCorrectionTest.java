package io.dynnibal.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The corrected candidates against the exact softmax normaliser over every target: the sum of
 * {@code exp(logit + offset)} over the negatives a step drew must estimate the sum of {@code
 * exp(logit)} over all targets but the positive.
 */
class SamplingCorrectionTest {
  private static final int TARGETS = 400;

  @Test
  void uniformDrawsCorrectedEstimateTheNormaliserWithoutBias() {
    Random random = new Random(3);
    double[] logits = logits(random);
    double exact = normaliserWithoutPositive(logits);
    int draws = 16;
    int trials = 40_000;
    double sum = 0;
    for (int trial = 0; trial < trials; trial++) {
      List<String> drawn = new ArrayList<>();
      for (int d = 0; d < draws; d++) {
        drawn.add(Integer.toString(random.nextInt(TARGETS)));
      }
      float[] offsets =
          SamplingCorrection.offsets(
              List.of("0"), drawn, id -> SamplingCorrection.uniformRate(draws, TARGETS));
      sum += correctedSum(logits, drawn, offsets);
    }
    // Uncorrected, the 16 draws would sum to about 16 / 400 of the normaliser.
    assertEquals(1, sum / trials / exact, 0.03);
  }

  @Test
  void aDrawFromTheSoftmaxCorrectedByItsProbabilityIsTheNormaliserItself() {
    Random random = new Random(4);
    double[] logits = logits(random);
    double exact = normaliserWithoutPositive(logits);
    for (int y = 1; y < TARGETS; y += 37) {
      double probability = Math.exp(logits[y]) / exact;
      List<String> drawn = List.of(Integer.toString(y));
      float[] offsets = SamplingCorrection.offsets(List.of("0"), drawn, id -> probability);
      assertEquals(1, correctedSum(logits, drawn, offsets) / exact, 1e-5);
    }
  }

  @Test
  void theOffsetsFollowTheCandidatesOrderPositivesFirst() {
    float[] offsets =
        SamplingCorrection.offsets(
            List.of("a", "b"), List.of("x"), id -> id.equals("x") ? 0.5 : 0.01);
    assertEquals((float) -Math.log(0.01), offsets[0], 1e-6);
    assertEquals((float) -Math.log(0.01), offsets[1], 1e-6);
    assertEquals((float) -Math.log(0.5), offsets[2], 1e-6);
  }

  @Test
  void aMeaninglessExpectedCountIsRefused() {
    assertThrows(
        IllegalArgumentException.class,
        () -> SamplingCorrection.offsets(List.of("a"), List.of("x"), id -> Double.NaN));
    assertThrows(
        IllegalArgumentException.class,
        () -> SamplingCorrection.offsets(List.of("a"), List.of("x"), id -> -1));
  }

  /**
   * Target 0 is the positive; the others' logits spread over several nats, as a trained model's.
   */
  private static double[] logits(Random random) {
    double[] logits = new double[TARGETS];
    for (int y = 0; y < TARGETS; y++) {
      logits[y] = 2 * random.nextGaussian();
    }
    return logits;
  }

  private static double normaliserWithoutPositive(double[] logits) {
    double z = 0;
    for (int y = 1; y < logits.length; y++) {
      z += Math.exp(logits[y]);
    }
    return z;
  }

  /** The negatives' corrected sum, the positive's columns left out (the loss masks them). */
  private static double correctedSum(double[] logits, List<String> drawn, float[] offsets) {
    double sum = 0;
    for (int j = 0; j < drawn.size(); j++) {
      int y = Integer.parseInt(drawn.get(j));
      if (y != 0) {
        sum += Math.exp(logits[y] + offsets[1 + j]);
      }
    }
    return sum;
  }
}
