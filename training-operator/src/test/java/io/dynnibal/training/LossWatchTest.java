package io.dynnibal.training;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

class LossWatchTest {

  /** A healthy run: loss falling from 3 to about 0.3, with 20 % noise. */
  private static double healthy(int step, Random noise) {
    return (0.3 + 2.7 * Math.exp(-step / 80.0)) * (1 + 0.2 * (noise.nextDouble() - 0.5));
  }

  @Test
  void aHealthyNoisyRunHasNoSpikeAndDoesNotDiverge() {
    LossWatch watch = new LossWatch();
    Random noise = new Random(1);
    for (int step = 1; step <= 1000; step++) {
      assertFalse(watch.observe(healthy(step, noise)), "step " + step);
    }
    assertEquals(0, watch.spikes());
    assertFalse(watch.diverged());
  }

  @Test
  void oneBadStepIsASpikeNotADivergence() {
    LossWatch watch = new LossWatch();
    Random noise = new Random(2);
    for (int step = 1; step <= 500; step++) {
      double loss = step == 300 ? 2.5 : healthy(step, noise);
      assertEquals(step == 300, watch.observe(loss), "step " + step);
    }
    assertEquals(1, watch.spikes());
    assertFalse(watch.diverged());
  }

  @Test
  void aLossThatRisesAndStaysUpIsADivergenceThatStaysReported() {
    LossWatch watch = new LossWatch();
    Random noise = new Random(3);
    for (int step = 1; step <= 400; step++) {
      watch.observe(healthy(step, noise));
    }
    assertFalse(watch.diverged());
    // The demo's diverged runs: from about .5 to between 1 and 2.6 for the rest of the run.
    for (int step = 401; step <= 500; step++) {
      watch.observe(1.0 + 1.6 * noise.nextDouble());
    }
    assertTrue(watch.diverged());
    for (int step = 501; step <= 800; step++) {
      watch.observe(healthy(step, noise));
    }
    assertTrue(watch.diverged(), "divergence is sticky");
  }

  @Test
  void aMemorisedLossThatTriplesFromNearZeroIsNoDivergence() {
    // Seen in a healthy demo run (R@1 .39): second-epoch loss ~0.03, then ~0.1 after a re-encode.
    LossWatch watch = new LossWatch();
    Random noise = new Random(5);
    for (int step = 1; step <= 400; step++) {
      watch.observe(step < 200 ? healthy(step, noise) : 0.03);
    }
    for (int step = 401; step <= 700; step++) {
      watch.observe(0.1 * (1 + 0.2 * (noise.nextDouble() - 0.5)));
    }
    assertFalse(watch.diverged());
  }

  @Test
  void theFirstStepsCannotSetTheLowest() {
    // A loss that dips early (random start) and settles higher is not a divergence.
    LossWatch watch = new LossWatch();
    for (int step = 1; step <= 400; step++) {
      watch.observe(step < 60 ? 0.1 : 0.8);
    }
    assertFalse(watch.diverged());
  }

  @Test
  void aRestoredWatchContinuesWhereTheSavedOneWas() {
    LossWatch a = new LossWatch();
    Random noise = new Random(4);
    for (int step = 1; step <= 200; step++) {
      a.observe(healthy(step, noise));
    }
    a.observe(5.0);
    LossWatch b = new LossWatch();
    b.restore(a.save());
    assertArrayEquals(a.save(), b.save());
    for (int step = 202; step <= 300; step++) {
      double loss = healthy(step, noise);
      assertEquals(a.observe(loss), b.observe(loss));
    }
    assertEquals(a.trend(), b.trend());
    assertEquals(1, b.spikes());
  }
}
