package io.dynnibal.negatives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class SamplerTest {
  @Test
  void everySamplerButInBatchGetsTheSameDosePerExample() {
    int perExample = 2;
    int batch = 16;
    int uniform = 32;
    for (Sampler s : Sampler.values()) {
      int total = s.uniformDraws(uniform, perExample, batch) + s.hardNegatives(perExample, batch);
      assertEquals(s == Sampler.IN_BATCH ? 0 : 32 + 2 * 16, total, s.id);
    }
    assertEquals(32, Sampler.DYNNIBAL_MH.hardNegatives(perExample, batch));
    assertEquals(32, Sampler.EXHAUSTIVE.hardNegatives(perExample, batch));
    assertEquals(32, Sampler.STOCHASTIC_NEGATIVE_MINING.hardNegatives(perExample, batch));
  }

  @Test
  void namesRoundTrip() {
    for (Sampler s : Sampler.values()) {
      assertEquals(s, Sampler.of(s.id));
    }
    assertThrows(IllegalArgumentException.class, () -> Sampler.of("top-1"));
  }
}
