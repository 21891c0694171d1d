package io.dynnibal.sampler;

/**
 * The mining building blocks a shard offers a {@link Sampler}: each sampler picks one, with its
 * parameters, and the shard operator builds it. {@code M} is the shard's miner type.
 */
public interface ShardMiners<M> {

  /** Whether a sampler's shards mine at all. */
  ShardMiners<Boolean> MINES =
      new ShardMiners<>() {
        @Override
        public Boolean none() {
          return false;
        }

        @Override
        public Boolean pool(double fraction, int refreshEvery) {
          return true;
        }

        @Override
        public Boolean metropolisHastings(DynnibalMh sampler) {
          return true;
        }

        @Override
        public Boolean rejection(DynnibalRejection sampler) {
          return true;
        }

        @Override
        public Boolean exactCache() {
          return true;
        }

        @Override
        public Boolean auto(Auto sampler) {
          return true;
        }

        @Override
        public Boolean lexical() {
          return true;
        }
      };

  /** The shards mine nothing (their reply carries positives and uniform draws only). */
  M none();

  /**
   * Brute force at full dimension over a pool of the shard's targets: a random {@code fraction}
   * redrawn every {@code refreshEvery} steps and with each model version, or with {@code fraction}
   * 1 every target, re-encoded with each model version (the exhaustive oracle).
   */
  M pool(double fraction, int refreshEvery);

  /** Metropolis-Hastings over the SG tree of Nyström vectors with a cluster proposal (Alg. 3). */
  M metropolisHastings(DynnibalMh sampler);

  /** Exact rejection sampling over the SG tree of Nyström vectors (Alg. 2). */
  M rejection(DynnibalRejection sampler);

  /** The exact softmax over every Nyström cache vector of the shard's tree, scored in one pass. */
  M exactCache();

  /**
   * {@link #exactCache} below the sampler's bound of targets, {@link #metropolisHastings} above.
   */
  M auto(Auto sampler);

  /** BM25 over the shard's target texts, the best for each query's text (chosen, not drawn). */
  M lexical();
}
