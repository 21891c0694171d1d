package io.dynnibal.model.features;

import java.io.Serializable;

/**
 * How {@link HashedFeaturizer} turns text into features.
 *
 * @param buckets number of hash buckets, the rows of the embedding table
 * @param maxWords words read from the start of a text; the rest is ignored (bounds the cost of a
 *     huge text)
 * @param charNgramWords the first words that also get character n-grams: the package name and the
 *     first phrase of a description, or a whole one-line query. Prose further on is covered well
 *     enough by words and bigrams, and n-grams of every word would multiply the rows a batch
 *     touches.
 * @param minCharN shortest character n-gram
 * @param maxCharN longest character n-gram
 */
public record FeatureConfig(
    int buckets, int maxWords, int charNgramWords, int minCharN, int maxCharN)
    implements Serializable {
  public static final FeatureConfig DEFAULT = new FeatureConfig(1 << 18, 64, 16, 3, 5);

  public FeatureConfig {
    if (buckets < 16) {
      throw new IllegalArgumentException("buckets must be at least 16, got " + buckets);
    }
    if (maxWords < 1) {
      throw new IllegalArgumentException("maxWords must be at least 1, got " + maxWords);
    }
    if (charNgramWords < 0 || charNgramWords > maxWords) {
      throw new IllegalArgumentException(
          "charNgramWords must be in [0, maxWords=" + maxWords + "], got " + charNgramWords);
    }
    if (minCharN < 1 || maxCharN < minCharN || maxCharN > 12) {
      throw new IllegalArgumentException(
          "character n-grams need 1 <= minCharN <= maxCharN <= 12, got "
              + minCharN
              + ".."
              + maxCharN);
    }
  }
}
