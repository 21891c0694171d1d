package io.dynnibal.negatives;

import java.util.Arrays;
import java.util.List;

/**
 * The negative samplers, chosen by the {@code sampler} setting. Every one trains with in-batch
 * negatives (the batch's other positives); they differ in what they add and where that is mined:
 *
 * <ul>
 *   <li>{@code in-batch}: nothing more;
 *   <li>{@code uniform}: {@code negatives.uniform} + B x {@code negatives.per.example} uniform
 *       draws from all targets (the same number of negatives per step as the hard-negative
 *       samplers, so a comparison measures only how they are chosen);
 *   <li>{@code stochastic-negative-mining} (Reddi et al. 2019): each shard scores a random fraction
 *       of its targets at full dimension and offers each query its best; the pool is redrawn every
 *       {@code snm.refresh.every} steps and whenever the shard gets newer parameters;
 *   <li>{@code exhaustive} (the oracle): the same over every target, re-encoded with each model
 *       update (every w steps);
 *   <li>{@code negative-cache} (Lindgren et al. 2021): the trainer keeps a FIFO of the targets it
 *       trained on with their embeddings and draws from the softmax over it;
 *   <li>{@code dynnibal-mh}, {@code dynnibal-rejection}: the paper's samplers over the shards' SG
 *       trees of Nyström vectors.
 * </ul>
 *
 * All but {@code in-batch} add {@code negatives.uniform} uniform negatives (the paper's setting,
 * and the data of the re-encoding regression).
 */
public enum Sampler {
  IN_BATCH("in-batch", Mining.NONE),
  UNIFORM("uniform", Mining.NONE),
  STOCHASTIC_NEGATIVE_MINING("stochastic-negative-mining", Mining.SHARD_POOL),
  NEGATIVE_CACHE("negative-cache", Mining.TRAINER_CACHE),
  EXHAUSTIVE("exhaustive", Mining.SHARD_POOL),
  DYNNIBAL_MH("dynnibal-mh", Mining.SHARD_TREE),
  DYNNIBAL_REJECTION("dynnibal-rejection", Mining.SHARD_TREE);

  /** Where a sampler finds its hard negatives. */
  public enum Mining {
    /** No hard negatives. */
    NONE,
    /** Each shard, from its SG tree over low-dimensional Nyström vectors (CPU memory). */
    SHARD_TREE,
    /**
     * Each shard, by brute force over full-dimension vectors (what a deployment keeps on the
     * accelerator).
     */
    SHARD_POOL,
    /** The trainer, from its own cache of full-dimension vectors. */
    TRAINER_CACHE
  }

  public final String id;
  public final Mining mining;

  Sampler(String id, Mining mining) {
    this.id = id;
    this.mining = mining;
  }

  public static final List<String> NAMES = Arrays.stream(values()).map(s -> s.id).toList();

  public static Sampler of(String id) {
    for (Sampler s : values()) {
      if (s.id.equals(id)) {
        return s;
      }
    }
    throw new IllegalArgumentException("unknown sampler \"" + id + "\"; one of " + NAMES);
  }

  /**
   * Hard negatives per step (at most: duplicates across examples collapse, and a small index or
   * cache may offer fewer): {@code negatives.per.example} for each of the batch's queries, shared
   * across the batch as the paper does.
   */
  public int hardNegatives(int perExample, int batchSize) {
    return mining == Mining.NONE ? 0 : perExample * batchSize;
  }

  /**
   * Uniform negatives per step, given the {@code negatives.uniform} setting: the uniform sampler
   * also draws what the others mine, so every sampler but in-batch trains on the same number of
   * negatives per step and a comparison measures only how they are chosen.
   */
  public int uniformDraws(int uniformNegatives, int perExample, int batchSize) {
    return switch (this) {
      case IN_BATCH -> 0;
      case UNIFORM -> uniformNegatives + perExample * batchSize;
      default -> uniformNegatives;
    };
  }

  @Override
  public String toString() {
    return id;
  }
}
