package io.dynnibal.model.transformer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** Half precision: exact round trips, and floats rounded to the nearest half. */
class HalfFloatsTest {
  @Test
  void everyHalfSurvivesARoundTripThroughFloat() {
    for (int h = 0; h < 65536; h++) {
      float f = HalfFloats.toFloat((short) h);
      if (Float.isNaN(f)) {
        assertTrue(Float.isNaN(HalfFloats.toFloat(HalfFloats.fromFloat(f))));
        continue;
      }
      assertEquals((short) h, HalfFloats.fromFloat(f), "half 0x" + Integer.toHexString(h));
    }
  }

  @Test
  void floatsGoToTheNearestHalf() {
    Random random = new Random(7);
    for (int i = 0; i < 200_000; i++) {
      float f = (float) (random.nextGaussian() * Math.pow(10, random.nextInt(9) - 5));
      short h = HalfFloats.fromFloat(f);
      float back = HalfFloats.toFloat(h);
      // No other half is nearer: the neighbours on each side are at least as far.
      float below = HalfFloats.toFloat((short) (h - 1));
      float above = HalfFloats.toFloat((short) (h + 1));
      double error = Math.abs(back - f);
      if (Float.isFinite(below) && Math.signum(below) == Math.signum(back)) {
        assertTrue(error <= Math.abs(below - f), f + " -> " + back + ", but " + below);
      }
      if (Float.isFinite(above) && Math.signum(above) == Math.signum(back)) {
        assertTrue(error <= Math.abs(above - f), f + " -> " + back + ", but " + above);
      }
    }
    assertEquals(Float.POSITIVE_INFINITY, HalfFloats.toFloat(HalfFloats.fromFloat(70_000f)));
    assertEquals(65504f, HalfFloats.toFloat(HalfFloats.fromFloat(65504f)));
    assertEquals(0f, HalfFloats.toFloat(HalfFloats.fromFloat(1e-9f)));
  }
}
