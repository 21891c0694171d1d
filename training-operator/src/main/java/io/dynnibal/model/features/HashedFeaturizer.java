package io.dynnibal.model.features;

import java.util.Arrays;

/**
 * Text to hashed features, with no vocabulary to download: lower-cased words (runs of letters and
 * digits), word bigrams, whole "compound" tokens such as {@code libmoosex-role-timer-perl} or
 * {@code python3.11}, and character n-grams of the first few words with boundary marks ({@code
 * <moo}, {@code osex>}), so that a package name shares features with the words it is made of. Each
 * kind of feature hashes in its own namespace.
 *
 * <p>Weights are {@code 1 + ln(count)} per bucket (colliding features add up), scaled to unit L2
 * norm. The featurizer is stateless and thread-safe; the same text always gives the same features.
 */
public final class HashedFeaturizer {
  private static final long WORD = 0x9E3779B97F4A7C15L;
  private static final long BIGRAM = 0xC2B2AE3D27D4EB4FL;
  private static final long COMPOUND = 0x165667B19E3779F9L;
  private static final long CHAR_NGRAM = 0xD6E8FEB86659FD93L;
  private static final char WORD_START = '\u0002';
  private static final char WORD_END = '\u0003';

  private final FeatureConfig config;

  /** {@code buckets - 1} when the bucket count is a power of two, else -1. */
  private final long bucketMask;

  public HashedFeaturizer(FeatureConfig config) {
    this.config = config;
    int buckets = config.buckets();
    this.bucketMask = Integer.bitCount(buckets) == 1 ? buckets - 1 : -1;
  }

  public FeatureConfig config() {
    return config;
  }

  /** The features of {@code text}; {@link Features#EMPTY} for a text without letters or digits. */
  public Features featurize(String text) {
    if (text == null) {
      throw new IllegalArgumentException("text is null");
    }
    Scan scan = scan(text);
    int[] buckets = new int[scan.featureCount()];
    int n = 0;
    char[] s = scan.chars;
    for (int w = 0; w < scan.words; w++) {
      int start = scan.wordStart[w];
      int end = scan.wordEnd[w];
      buckets[n++] = bucket(hash(WORD, s, start, end));
      if (w > 0) {
        long h = hash(BIGRAM, s, scan.wordStart[w - 1], scan.wordEnd[w - 1]);
        buckets[n++] = bucket(hash(h, s, start, end));
      }
      if (w < config.charNgramWords()) {
        n = charNgrams(s, start, end, buckets, n);
      }
    }
    for (int c = 0; c < scan.compounds; c++) {
      buckets[n++] = bucket(hash(COMPOUND, s, scan.compoundStart[c], scan.compoundEnd[c]));
    }
    return weigh(buckets, n, config.buckets());
  }

  private int charNgrams(char[] s, int start, int end, int[] buckets, int n) {
    // The word with its boundary marks is start-1 .. end (virtually); n-grams never leave it. The
    // n-grams from one position share their prefixes, and so their hashes' first steps: one pass
    // per position gives every size (the buckets are sorted afterwards, so the order is free).
    int length = end - start + 2;
    int shortest = config.minCharN();
    int longest = config.maxCharN();
    for (int from = 0; from + shortest <= length; from++) {
      long h = CHAR_NGRAM;
      int last = Math.min(length, from + longest);
      for (int i = from; i < last; i++) {
        char c = i == 0 ? WORD_START : i == length - 1 ? WORD_END : s[start + i - 1];
        h = mix(h, c);
        if (i - from + 1 >= shortest) {
          buckets[n++] = bucket(h);
        }
      }
    }
    return n;
  }

  private static Features weigh(int[] buckets, int n, int bucketCount) {
    if (n == 0) {
      return Features.EMPTY;
    }
    BucketSort.sort(buckets, n, bucketCount);
    int[] ids = new int[n];
    float[] weights = new float[n];
    int unique = 0;
    for (int i = 0; i < n; ) {
      int j = i;
      while (j < n && buckets[j] == buckets[i]) {
        j++;
      }
      ids[unique] = buckets[i];
      weights[unique] = weight(j - i);
      unique++;
      i = j;
    }
    double norm = 0;
    for (int i = 0; i < unique; i++) {
      norm += (double) weights[i] * weights[i];
    }
    float scale = (float) (1 / Math.sqrt(norm));
    for (int i = 0; i < unique; i++) {
      weights[i] *= scale;
    }
    return new Features(Arrays.copyOf(ids, unique), Arrays.copyOf(weights, unique));
  }

  /** {@code 1 + ln(count)} for the counts a text has most (nearly all are 1). */
  private static final float[] WEIGHTS = new float[64];

  static {
    for (int count = 1; count < WEIGHTS.length; count++) {
      WEIGHTS[count] = (float) (1 + Math.log(count));
    }
  }

  private static float weight(int count) {
    return count < WEIGHTS.length ? WEIGHTS[count] : (float) (1 + Math.log(count));
  }

  private Scan scan(String text) {
    int limit = config.maxWords();
    Scan scan = new Scan(text.toLowerCase(java.util.Locale.ROOT).toCharArray(), limit);
    char[] s = scan.chars;
    int i = 0;
    while (i < s.length && scan.words < limit) {
      while (i < s.length && Character.isWhitespace(s[i])) {
        i++;
      }
      int tokenStart = i;
      while (i < s.length && !Character.isWhitespace(s[i])) {
        i++;
      }
      scan.addToken(tokenStart, i, limit);
    }
    return scan;
  }

  private int bucket(long hash) {
    long mixed = fmix64(hash);
    // The remainder by a power of two (the default's 2^18) is its low bits, without a division.
    return bucketMask >= 0
        ? (int) (mixed & bucketMask)
        : (int) Long.remainderUnsigned(mixed, config.buckets());
  }

  private static long hash(long seed, char[] s, int start, int end) {
    long h = seed;
    for (int i = start; i < end; i++) {
      h = mix(h, s[i]);
    }
    return mix(h, ' ');
  }

  /**
   * FNV-1a step over one UTF-16 unit; buckets are taken after {@link #fmix64} so low bits are well
   * mixed.
   */
  private static long mix(long h, char c) {
    return (h ^ c) * 0x100000001B3L;
  }

  private static long fmix64(long k) {
    k ^= k >>> 33;
    k *= 0xFF51AFD7ED558CCDL;
    k ^= k >>> 33;
    k *= 0xC4CEB9FE1A85EC53L;
    k ^= k >>> 33;
    return k;
  }

  /** Word and compound-token boundaries of the first {@code maxWords} words. */
  private final class Scan {
    final char[] chars;
    final int[] wordStart;
    final int[] wordEnd;
    final int[] compoundStart;
    final int[] compoundEnd;
    int words;
    int compounds;

    Scan(char[] chars, int limit) {
      this.chars = chars;
      wordStart = new int[limit];
      wordEnd = new int[limit];
      compoundStart = new int[limit];
      compoundEnd = new int[limit];
    }

    /**
     * Splits one whitespace-delimited token into words; keeps it whole too when it is more than one
     * bare word.
     */
    void addToken(int start, int end, int limit) {
      while (start < end && !isWordChar(chars[start]) && isTrimmed(chars[start])) {
        start++;
      }
      while (end > start && !isWordChar(chars[end - 1]) && isTrimmed(chars[end - 1])) {
        end--;
      }
      int firstWord = words;
      int i = start;
      while (i < end && words < limit) {
        while (i < end && !isWordChar(chars[i])) {
          i++;
        }
        int from = i;
        while (i < end && isWordChar(chars[i])) {
          i++;
        }
        if (i > from) {
          wordStart[words] = from;
          wordEnd[words] = i;
          words++;
        }
      }
      boolean bareWord =
          words - firstWord == 1 && wordStart[firstWord] == start && wordEnd[firstWord] == end;
      if (words > firstWord && !bareWord && compounds < limit) {
        compoundStart[compounds] = start;
        compoundEnd[compounds] = end;
        compounds++;
      }
    }

    int featureCount() {
      int n = 2 * words + compounds;
      int ngramWords = Math.min(words, config.charNgramWords());
      for (int w = 0; w < ngramWords; w++) {
        int length = wordEnd[w] - wordStart[w] + 2;
        for (int size = config.minCharN(); size <= config.maxCharN(); size++) {
          n += Math.max(0, length - size + 1);
        }
      }
      return n;
    }
  }

  private static boolean isWordChar(char c) {
    return Character.isLetterOrDigit(c);
  }

  /**
   * Punctuation stripped from the ends of a compound token ("(libfoo-dev)," is the compound
   * "libfoo-dev").
   */
  private static boolean isTrimmed(char c) {
    return ".,;:!?()[]{}\"'`<>".indexOf(c) >= 0;
  }
}
