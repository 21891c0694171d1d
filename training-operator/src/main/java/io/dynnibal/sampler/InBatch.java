package io.dynnibal.sampler;

/**
 * {@code in-batch}: the batch's other positives and nothing more (what a sentence-transformers user
 * gets with MultipleNegativesRankingLoss). The shards get no model updates: they serve positives
 * only.
 */
public record InBatch() implements Sampler {
  public static final String ID = "in-batch";

  @Override
  public String id() {
    return ID;
  }

  @Override
  public int uniformDraws(int uniformNegatives, int perExample, int batchSize) {
    return 0;
  }

  @Override
  public boolean publishesModelUpdates() {
    return false;
  }
}
