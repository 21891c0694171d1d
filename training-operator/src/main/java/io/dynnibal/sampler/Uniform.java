package io.dynnibal.sampler;

/**
 * {@code uniform}: {@code negatives.uniform} + B x {@code negatives.per.example} uniform draws from
 * all targets, the same number of negatives per step as the hard-negative samplers, so that a
 * comparison measures only how negatives are chosen.
 */
public record Uniform() implements Sampler {
  public static final String ID = "uniform";

  @Override
  public String id() {
    return ID;
  }

  @Override
  public int uniformDraws(int uniformNegatives, int perExample, int batchSize) {
    return uniformNegatives + perExample * batchSize;
  }
}
