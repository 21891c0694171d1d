package io.dynnibal.jobs.config;

import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.negatives.NegativesPool;
import io.dynnibal.negatives.UnnamedShare;
import io.dynnibal.settings.Setting;
import io.dynnibal.training.SamplingCorrection;
import java.io.Serializable;

/**
 * The negatives settings group, shared by every sampler: the dose, how negatives are chosen and
 * corrected, which targets they come from, and the fidelity probes.
 */
public final class NegativesSettings implements Serializable {
  private static final long serialVersionUID = 1L;

  /**
   * The paper draws 64 per example (B x 64 shared negatives a step). The trainer's cost grows with
   * the candidates it encodes (B positives + B x k hard + uniform), so the default is 1: every
   * example gets a hard negative of its own.
   */
  @Setting(
      value =
          "hard negatives drawn for each query (its own positive excluded), shared across the"
              + " batch",
      min = 1)
  public int negativesPerExample = 1;

  @Setting(
      "how hard negatives are chosen: sample (from the softmax exp(beta score)) or top-k (the"
          + " highest-scoring; always for bm25)")
  public String negativesMode = NegativesMode.SAMPLE.id;

  /**
   * Sample mode draws from {@code exp(sharpness beta score)}: above 1 the draws lean towards the
   * hardest targets, between the model's own softmax (1) and top-k (the limit). The correction
   * counts each draw by the probability it was drawn with, so the loss still estimates the softmax
   * at the model's beta.
   */
  @Setting(
      value =
          "sample mode: the softmax hard negatives are drawn from is exp(sharpness beta score) (1:"
              + " the model's own; above 1 leans towards the hardest, top-k is the limit)",
      min = 0,
      aboveMin = true)
  public double negativesSharpness = 1;

  /** See {@link SamplingCorrection} for what the correction estimates and why it matters. */
  @Setting(
      "how the loss counts each candidate: logq (its logit less the log of how many times the"
          + " step expected to draw it, so the candidates estimate the softmax over every target)"
          + " or none (the softmax over the candidates as drawn)")
  public String negativesCorrection = SamplingCorrection.Mode.LOGQ.id;

  /** See {@link NegativesPool} for why a pool of named positives exists and what it changes. */
  @Setting(
      "which targets the shards draw negatives from: all (every target, the paper's protocol) or"
          + " positives (those a training pair has named as its positive so far)")
  public String negativesPool = NegativesPool.ALL.id;

  /** See {@link UnnamedShare} for why a share between the two pools exists. */
  @Setting(
      value =
          "under negatives.pool=positives, the share of targets no pair has named that join the"
              + " pool too, drawn anew for each model version (0: named targets only; 1: every"
              + " target)",
      min = 0,
      max = 1)
  public double negativesUnnamedShare = 0;

  /**
   * The shards encode queries with the model version they hold (tens of steps old) and score the
   * cache; re-scoring lets the trainer choose among their candidates with its current parameters,
   * as the negative cache does with its fresh query embeddings.
   */
  @Setting(
      value =
          "candidates the shards offer per query for the trainer to re-score with its current"
              + " model before it draws negatives.per.example of them (0: none, the shards'"
              + " choice is final)",
      min = 0)
  public int negativesCandidatesPerExample = 0;

  @Setting(
      value =
          "leave a negative out of a query's softmax when it scores above this share of the"
              + " query's positive: likely a false negative, a near-duplicate of the answer"
              + " (NV-Retriever's relative margin; 0: off)",
      min = 0,
      max = 1)
  public double negativesMargin = 0;

  @Setting(value = "uniform negatives per step (the re-encoding regression's data)", min = 0)
  public int negativesUniform = 64;

  /**
   * The measurement costs a full-dimension encoding of every target per model version in each shard
   * (what exhaustive mining pays): off by default, on in {@code ./dynnibal experiment}.
   */
  @Setting(
      value =
          "queries of each batch whose hard negatives are compared with exact mining over every"
              + " target (fidelity: overlap_topk, logit_ratio, mass_ratio in the metrics; 0: off)",
      min = 0)
  public int fidelityProbes = 0;
}
