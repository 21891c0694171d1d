package io.dynnibal.gpukit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;
import org.junit.jupiter.api.Test;

class LossAgreementTest {
  private static float[] curve(long seed) {
    Random random = new Random(seed);
    float[] losses = new float[300];
    for (int s = 0; s < losses.length; s++) {
      losses[s] = (float) (2.0 * Math.exp(-s / 100.0) + 0.2 * random.nextDouble());
    }
    return losses;
  }

  @Test
  void aCurveAgreesWithItself() {
    float[] losses = curve(1);
    assertEquals(true, LossAgreement.DEFAULT.compare(losses, losses.clone()).get("agree"));
  }

  @Test
  void aFirstStepOffByMoreThanTheToleranceDisagrees() {
    float[] a = curve(1);
    float[] b = a.clone();
    b[0] *= 1.01f;
    assertEquals(false, LossAgreement.DEFAULT.compare(a, b).get("agree"));
  }

  @Test
  void noisyStepsAgreeWhileTheWindowsDoNotDrift() {
    float[] a = curve(1);
    float[] b = a.clone();
    Random random = new Random(2);
    for (int s = 1; s < b.length; s++) {
      b[s] = a[s] + (float) (0.01 * random.nextGaussian()); // step by step apart, windows close
    }
    assertEquals(true, LossAgreement.DEFAULT.compare(a, b).get("agree"));
  }

  @Test
  void aWindowThatDriftsDisagrees() {
    float[] a = curve(1);
    float[] b = a.clone();
    for (int s = 250; s < b.length; s++) {
      b[s] = a[s] * 1.05f;
    }
    assertEquals(false, LossAgreement.DEFAULT.compare(a, b).get("agree"));
  }
}
