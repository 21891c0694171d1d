package io.dynnibal.sampler;

import io.dynnibal.negatives.NegativesMode;
import java.io.Serializable;

/**
 * One negative sampler of the paper's comparison, with the settings it was built from. Every
 * sampler trains with in-batch negatives (the batch's other positives); a sampler says what it
 * adds: how many negatives a step draws, where its hard negatives are mined (the shards' building
 * blocks, {@link ShardMiners}, or the trainer's own cache, {@link #trainerNegatives}) and what a
 * deployment holds on the accelerator to mine them (the paper's Mem %).
 *
 * <p>Samplers are found by name in {@link Samplers}; adding one is a class in this package and a
 * line there. Instances are immutable values: they travel inside the operators' settings.
 */
public interface Sampler extends Serializable {

  /** The name the {@code sampler} setting selects it by. */
  String id();

  /**
   * Hard negatives per step (at most: duplicates across examples collapse, and a small index or
   * cache may offer fewer): {@code negatives.per.example} for each of the batch's queries, shared
   * across the batch as the paper does.
   */
  default int hardNegatives(int perExample, int batchSize) {
    return minesHardNegatives() ? perExample * batchSize : 0;
  }

  /** Whether it finds hard negatives at all, in the shards or in the trainer. */
  default boolean minesHardNegatives() {
    return shardsMine();
  }

  /**
   * Uniform negatives per step, given the {@code negatives.uniform} setting: the re-encoding
   * regression's data, drawn by every sampler whose shards get model updates.
   */
  default int uniformDraws(int uniformNegatives, int perExample, int batchSize) {
    return uniformNegatives;
  }

  /**
   * What each shard runs to mine this sampler's hard negatives, from the shard's building blocks
   * (none unless the sampler says otherwise).
   */
  default <M> M shardMiner(ShardMiners<M> shard) {
    return shard.none();
  }

  /**
   * How its negatives are picked, given the {@code negatives.mode} setting: drawn from the softmax
   * or the best (the setting, unless the sampler can only choose).
   */
  default NegativesMode negativesMode(NegativesMode configured) {
    return configured;
  }

  /** Whether the shards mine (and so the trainer may re-score their candidates). */
  default boolean shardsMine() {
    return shardMiner(ShardMiners.MINES);
  }

  /**
   * The trainer's own source of hard negatives, or null where the shards mine them (a new one per
   * trainer: it holds state).
   */
  default TrainerNegatives trainerNegatives(TrainerNegatives.Context context) {
    return null;
  }

  /**
   * Whether the trainer publishes model updates every w steps: the shards' parameters, landmarks
   * and re-encoding map. Only a sampler that needs nothing from the shards but positives skips
   * them.
   */
  default boolean publishesModelUpdates() {
    return true;
  }

  /**
   * Floats a deployment holds on the trainer's accelerator for mining (Mem %'s numerator): none
   * unless the sampler mines.
   */
  default long miningFloats(MiningFloats footprint) {
    return 0;
  }

  /**
   * Whether {@code ./dynnibal experiment} runs it when no samplers are named: every sampler but
   * those too slow for a routine comparison.
   */
  default boolean comparedByDefault() {
    return true;
  }
}
