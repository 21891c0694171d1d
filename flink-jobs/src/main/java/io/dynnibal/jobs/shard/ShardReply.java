package io.dynnibal.jobs.shard;

import io.dynnibal.negatives.SoftmaxFidelity;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.QueryBatch;

/** One shard's answer to one query batch. */
public class ShardReply {
  public long batchId;

  /**
   * The batch itself, in shard 0's reply only (so the merge needs no other input); null in the
   * others.
   */
  public QueryBatch batch;

  public int shard;

  /** Targets in this shard when it answered. */
  public int shardSize;

  /**
   * Targets the shard stores with a cache vector: its index's size, or more under {@code
   * negatives.pool=positives} (the denominator of Mem %).
   */
  public long storedTargets;

  public long modelVersion;

  /** Trainer step of the model version the shard sampled with. */
  public long modelStep;

  /**
   * Hard negatives, per query: {@code sampledQuery[i]} is the query index of {@code sampled[i]}.
   */
  public int[] sampledQuery;

  public TargetFeatures[] sampled;

  /**
   * Aligned with {@link #sampled}: the log of the probability that one draw of this shard's sampler
   * for the offer's query is that target (the softmax over this shard's targets but the query's
   * positive); NaN in top-k mode, where offers are chosen, not drawn. Null when nothing was mined.
   */
  public float[] sampledLogProbabilities;

  /**
   * Per query, this shard's estimate of {@code log sum exp(logit)} over its targets but the query's
   * positive (NaN when its miner has none): in sample mode the merge picks shards in proportion to
   * their mass, so the merged draws follow the softmax over all shards. Null when nothing was
   * mined.
   */
  public double[] logMass;

  /**
   * With {@code fidelity.probes}: per probe query (the batch's first ones), the exact softmax over
   * this shard's targets; null otherwise.
   */
  public SoftmaxFidelity.Part[] probes;

  /**
   * With {@code fidelity.probes}: aligned with {@link #sampled}, the exact logit of each offer to a
   * probe query (NaN for other queries and offers outside the exact pool); null otherwise.
   */
  public float[] sampledExactLogits;

  /**
   * Uniform draws from this shard's targets, with their cache vectors (the trainer's regression
   * data).
   */
  public TargetFeatures[] uniform;

  /**
   * Positives this shard holds: {@code positiveQuery[i]} is the query index of {@code
   * positives[i]}.
   */
  public int[] positiveQuery;

  public TargetFeatures[] positives;
  public double samplingMillis;

  /** Model updates this shard's subtask ignored (duplicate or older version) since it started. */
  public long updatesIgnored;

  public long proposals;
  public long accepted;

  /**
   * Floats this shard holds at full dimension for mining (a brute-force pool); 0 for the other
   * samplers.
   */
  public long miningFloats;

  public ShardReply() {}
}
