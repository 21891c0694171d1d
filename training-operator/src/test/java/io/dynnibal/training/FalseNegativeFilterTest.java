package io.dynnibal.training;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The relative-margin filter against a case worked by hand. */
class FalseNegativeFilterTest {
  private static final float M = SampledSoftmaxLoss.MASKED;

  @Test
  void masksNegativesAboveTheShareOfTheirQuerysPositive() {
    // Two queries, their positives (columns 0 and 1), three shared negatives (columns 2-4).
    float[] scores = {
      0.80f, 0.10f, 0.77f, 0.75f, 0.20f, // query 0: 0.95 x 0.80 = 0.76, so only 0.77 is dropped
      0.30f, 0.50f, 0.60f, 0.47f, 0.40f, // query 1: 0.95 x 0.50 = 0.475: 0.60 dropped, 0.47 kept
    };
    float[] mask = SampledSoftmaxLoss.mask(List.of("p0", "p1"), List.of("n0", "n1", "n2"));
    int dropped = FalseNegativeFilter.apply(mask, scores, 2, 5, 0.95f);
    assertEquals(2, dropped);
    assertArrayEquals(new float[] {0, 0, M, 0, 0, 0, 0, M, 0, 0}, mask);
  }

  @Test
  void leavesOtherPositivesAQueryWithANegativePositiveAndAZeroMarginAlone() {
    float[] scores = {
      0.50f, 0.90f, 0.10f, // another positive above the bound stays: it is someone's answer
      0.20f, -0.10f, 0.30f, // query 1's positive scores below zero: no bound
    };
    float[] mask = SampledSoftmaxLoss.mask(List.of("p0", "p1"), List.of("n0"));
    assertEquals(0, FalseNegativeFilter.apply(mask, scores, 2, 3, 0.95f));
    assertEquals(0, FalseNegativeFilter.apply(mask, new float[] {1, 0, 9, 0, 1, 9}, 2, 3, 0f));
    assertArrayEquals(new float[6], mask);
  }

  @Test
  void anAlreadyMaskedCandidateIsNotCountedTwice() {
    // The negative is query 0's own positive id: masked already, and still masked once.
    float[] mask = SampledSoftmaxLoss.mask(List.of("p0"), List.of("p0"));
    assertEquals(0, FalseNegativeFilter.apply(mask, new float[] {0.5f, 0.9f}, 1, 2, 0.5f));
    assertArrayEquals(new float[] {0, M}, mask);
  }
}
