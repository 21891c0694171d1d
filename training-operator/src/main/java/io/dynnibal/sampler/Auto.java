package io.dynnibal.sampler;

import io.dynnibal.settings.Setting;
import java.io.Serializable;

/**
 * {@code auto}, the default: each shard mines by the exact softmax over its Nyström caches ({@link
 * ExactCache}) while it stores at most {@code exactMaxTargets} targets, and by DyNNIBAL-MH at its
 * cluster budget ({@link DynnibalMh}) once it stores more, deciding again with every batch as it
 * grows or shrinks. The exact pass costs in proportion to the shard's targets and MH in proportion
 * to its budget, which is capped: below the bound the exact pass is both the cheaper and the
 * faithful one, above it the tree is the cheaper. The metric {@code shardsMinedExactly} says which
 * each shard used.
 *
 * @param mh the tree sampler of shards above the bound
 * @param exactMaxTargets the most targets a shard mines exactly
 */
public record Auto(DynnibalMh mh, int exactMaxTargets) implements Sampler {
  public static final String ID = "auto";

  /** The d' at which {@code exactMaxTargets} holds as it is. */
  public static final int REFERENCE_DIMENSION = 64;

  /** Its settings. */
  public static final class Settings implements Serializable {
    private static final long serialVersionUID = 1L;

    /**
     * Where the two costs cross at the job's d' on the machine this project is measured on ({@code
     * ./dynnibal bench mining} measures them on another): the exact pass over a shard's 8-bit cache
     * against MH at its capped budget.
     */
    @Setting(
        value =
            "auto: a shard storing at most this many targets (at d' = 64; at another d', this"
                + " times 64/d') mines by the exact softmax over its caches (exact-cache), a larger one"
                + " by dynnibal-mh",
        min = 0)
    public int autoExactMaxTargets = 131_072;
  }

  static Auto of(SamplerSettings s) {
    return new Auto(DynnibalMh.of(s), s.auto.autoExactMaxTargets);
  }

  /** Whether a shard storing {@code targets} vectors of {@code dimension} mines exactly. */
  public boolean exactFor(long targets, int dimension) {
    return targets * dimension <= (long) exactMaxTargets * REFERENCE_DIMENSION;
  }

  @Override
  public String id() {
    return ID;
  }

  @Override
  public <M> M shardMiner(ShardMiners<M> shard) {
    return shard.auto(this);
  }

  @Override
  public long miningFloats(MiningFloats footprint) {
    return footprint.reencodingMap();
  }

  /** Each shard mines as exact-cache or dynnibal-mh does, and both are compared on their own. */
  @Override
  public boolean comparedByDefault() {
    return false;
  }
}
