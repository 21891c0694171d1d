package io.dynnibal.model.transformer;

import java.util.Arrays;
import java.util.List;

/**
 * How much of a set of texts a transformer reads when each is cut to {@code maxTokens} tokens: the
 * texts' lengths in word pieces (without {@code [CLS]} and {@code [SEP]}) and the share of texts
 * that lose word pieces to the cut. A pretrained encoder reads a text from its start, so a budget
 * that cuts most targets hides what their later sentences say from the index.
 *
 * @param maxTokens the budget, {@code [CLS]} and {@code [SEP]} included
 * @param texts how many texts were measured
 * @param medianPieces the median length in word pieces
 * @param p90Pieces the 90th percentile (nearest rank)
 * @param cutShare the share of texts longer than {@code maxTokens - 2} word pieces
 */
public record TokenBudget(
    int maxTokens, int texts, int medianPieces, int p90Pieces, double cutShare) {

  /** The lengths of {@code texts} under {@code tokenizer}, against {@code maxTokens}. */
  public static TokenBudget measure(
      WordPieceTokenizer tokenizer, List<String> texts, int maxTokens) {
    if (maxTokens < 2) {
      throw new IllegalArgumentException("maxTokens must leave room for [CLS] and [SEP]");
    }
    int[] pieces = new int[texts.size()];
    int cut = 0;
    for (int i = 0; i < pieces.length; i++) {
      pieces[i] = tokenizer.encode(texts.get(i), Integer.MAX_VALUE).length - 2;
      if (pieces[i] > maxTokens - 2) {
        cut++;
      }
    }
    Arrays.sort(pieces);
    return new TokenBudget(
        maxTokens,
        pieces.length,
        nearestRank(pieces, 0.5),
        nearestRank(pieces, 0.9),
        pieces.length == 0 ? 0 : cut / (double) pieces.length);
  }

  /**
   * "12,345 targets: 71 word pieces at the median, 154 at the 90th percentile; 94.8 % cut at 32
   * tokens".
   */
  public String describe(String what) {
    return String.format(
        "%,d %s: %d word pieces at the median, %d at the 90th percentile; %.1f %% cut at %d tokens",
        texts, what, medianPieces, p90Pieces, 100 * cutShare, maxTokens);
  }

  private static int nearestRank(int[] sorted, double quantile) {
    if (sorted.length == 0) {
      return 0;
    }
    int rank = (int) Math.ceil(quantile * sorted.length);
    return sorted[Math.max(0, rank - 1)];
  }
}
