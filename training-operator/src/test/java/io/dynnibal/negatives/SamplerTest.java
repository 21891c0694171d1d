package io.dynnibal.negatives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class SamplerTest {
  @Test
  void samplersShareOneNegativeBudget() {
    int sampled = 64;
    int uniform = 32;
    for (Sampler s : new Sampler[] {Sampler.UNIFORM, Sampler.DYNNIBAL_MH, Sampler.EXHAUSTIVE}) {
      assertEquals(96, s.uniformDraws(uniform, sampled) + s.hardNegatives(sampled), s.id);
    }
    assertEquals(
        0,
        Sampler.IN_BATCH.uniformDraws(uniform, sampled) + Sampler.IN_BATCH.hardNegatives(sampled));
  }

  @Test
  void namesRoundTrip() {
    for (Sampler s : Sampler.values()) {
      assertEquals(s, Sampler.of(s.id));
    }
    assertThrows(IllegalArgumentException.class, () -> Sampler.of("top-1"));
  }
}
