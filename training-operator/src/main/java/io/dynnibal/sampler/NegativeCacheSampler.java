package io.dynnibal.sampler;

import io.dynnibal.settings.Setting;
import java.io.Serializable;

/**
 * {@code negative-cache} (Lindgren et al. 2021): the trainer keeps a FIFO of the targets it trained
 * on with their embeddings at the time and draws each query's negatives from the softmax over it;
 * the shards mine nothing.
 */
public record NegativeCacheSampler(int size) implements Sampler {
  public static final String ID = "negative-cache";

  /** Its settings. */
  public static final class Settings implements Serializable {
    private static final long serialVersionUID = 1L;

    @Setting(value = "negative cache: targets held (FIFO)", min = 1)
    public int negativeCacheSize = 1024;
  }

  static NegativeCacheSampler of(SamplerSettings s) {
    return new NegativeCacheSampler(s.negativeCache.negativeCacheSize);
  }

  @Override
  public String id() {
    return ID;
  }

  @Override
  public boolean minesHardNegatives() {
    return true;
  }

  @Override
  public TrainerNegatives trainerNegatives(TrainerNegatives.Context context) {
    return new TrainerNegativeCache(size, context);
  }

  @Override
  public long miningFloats(MiningFloats footprint) {
    return footprint.trainerNegatives();
  }
}
