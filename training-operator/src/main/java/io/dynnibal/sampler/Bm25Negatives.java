package io.dynnibal.sampler;

import io.dynnibal.negatives.NegativesMode;

/**
 * {@code bm25}, lexical hard negatives (the recipe of DPR, Karpukhin et al. 2020): each shard keeps
 * a BM25 index of its targets' texts, current as targets join, change and leave, and offers each
 * query the best-scoring targets other than its positive. The negatives are chosen, not drawn: the
 * mode is top-k whatever {@code negatives.mode} says, and the merge takes the best BM25 scores
 * across shards (each scored with its own shard's statistics). The model plays no part in mining,
 * so the negatives do not get harder as it learns; the index lives in the shards' memory, nothing
 * of it on the accelerator.
 */
public record Bm25Negatives() implements Sampler {
  public static final String ID = "bm25";

  @Override
  public String id() {
    return ID;
  }

  @Override
  public <M> M shardMiner(ShardMiners<M> shard) {
    return shard.lexical();
  }

  @Override
  public NegativesMode negativesMode(NegativesMode configured) {
    return NegativesMode.TOP_K;
  }
}
