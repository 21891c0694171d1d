package io.dynnibal.stream;

import io.dynnibal.negatives.SoftmaxFidelity;
import io.dynnibal.state.TargetFeatures;

/** A query batch with every shard's answer merged: what one training step consumes. */
public class MergedBatch {
  public QueryBatch batch;

  /**
   * Aligned with the batch's queries; an entry whose {@code id} is null was found in no shard
   * (unknown target).
   */
  public TargetFeatures[] positives;

  /** The batch's shared hard negatives (empty when the trainer re-scores candidates). */
  public TargetFeatures[] sampled;

  /**
   * Aligned with {@link #sampled}: the probability that the batch's draws included each (1 for a
   * negative chosen in top-k mode; see {@link io.dynnibal.negatives.Inclusions}). Null: unknown,
   * counted as 1.
   */
  public float[] sampledInclusion;

  /**
   * When the trainer re-scores: each query's candidates, {@code candidateQuery[i]} the query (index
   * in the batch) of {@code candidates[i]}; empty otherwise.
   */
  public TargetFeatures[] candidates = new TargetFeatures[0];

  public int[] candidateQuery = new int[0];

  /** The batch's shared uniform negatives (with cache vectors, for the regression reservoir). */
  public TargetFeatures[] uniform;

  /**
   * The probe queries' fidelity to exact mining ({@code fidelity.probes}; see {@link
   * SoftmaxFidelity}), each averaged over the probes that have it; NaN when not measured.
   */
  public double fidelityOverlapTopk = Double.NaN;

  public double fidelityLogitRatio = Double.NaN;
  public double fidelityMassRatio = Double.NaN;

  /** The probes' log normaliser as the shards estimated it, less the exact one (nats). */
  public double fidelityNormaliserError = Double.NaN;

  public long minModelVersion;
  public long minModelStep;
  public long indexTargets;

  /** Targets the shards store (every target of the corpus, indexed or not): Mem %'s base. */
  public long storedTargets;

  /** Per shard (by index), its sampling time for this batch. */
  public double[] shardMillis;

  /** The merge's time on this batch: storing the replies as they came, then merging them. */
  public double mergeMillis = Double.NaN;

  public long updatesIgnored;
  public long proposals;
  public long accepted;

  /** Floats all shards hold at full dimension for mining (see {@link ShardReply#miningFloats}). */
  public long miningFloats;

  public MergedBatch() {}
}
