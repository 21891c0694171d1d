package io.dynnibal.bench.scale;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Any number of targets with the texts of a real corpus's shape, for scale runs: each target's
 * length (in words) is that of a random real target, and its words are drawn from the real targets'
 * word stream (so word frequencies are the corpus's). Queries are a few words of one target's text.
 *
 * <p>Nothing is held per target: target {@code i} and query {@code j} are regenerated from the seed
 * on demand, so a million targets cost the benchmark's heap only the vocabulary (a few MB), and the
 * heap the job uses for them can be measured in the same JVM.
 */
public final class SyntheticCorpus {
  private final String[] vocabulary;
  private final int[] wordStream;
  private final int[] lengths;
  private final long seed;

  private SyntheticCorpus(String[] vocabulary, int[] wordStream, int[] lengths, long seed) {
    this.vocabulary = vocabulary;
    this.wordStream = wordStream;
    this.lengths = lengths;
    this.seed = seed;
  }

  /** The shape of {@code model}'s targets: their word stream and lengths. */
  public static SyntheticCorpus shapedLike(List<TargetText> model, long seed) {
    Map<String, Integer> ids = new HashMap<>();
    List<String> vocabulary = new ArrayList<>();
    int[] stream = new int[1024];
    int size = 0;
    int[] lengths = new int[model.size()];
    for (int t = 0; t < model.size(); t++) {
      String[] words = model.get(t).text().trim().split("\\s+");
      lengths[t] = Math.max(1, words.length);
      for (String w : words) {
        if (w.isEmpty()) {
          continue;
        }
        Integer id = ids.get(w);
        if (id == null) {
          id = vocabulary.size();
          ids.put(w, id);
          vocabulary.add(w);
        }
        if (size == stream.length) {
          stream = java.util.Arrays.copyOf(stream, size * 2);
        }
        stream[size++] = id;
      }
    }
    if (size == 0) {
      throw new IllegalArgumentException("the model corpus has no words");
    }
    return new SyntheticCorpus(
        vocabulary.toArray(new String[0]), java.util.Arrays.copyOf(stream, size), lengths, seed);
  }

  /** Target {@code i}: id {@code syn-<i>}. */
  public TargetText target(int i) {
    return new TargetText(id(i), text(i));
  }

  /** Query {@code j}: two to four words of a random target's text, labelled with that target. */
  public LabelledQuery query(int j, int targetCount) {
    SplittableRandom random = new SplittableRandom(mix(seed ^ 0x51ED270B27L, j));
    int t = random.nextInt(targetCount);
    String[] words = text(t).split(" ");
    int n = Math.min(words.length, 2 + random.nextInt(3));
    StringBuilder q = new StringBuilder();
    for (int k = 0; k < n; k++) {
      if (k > 0) {
        q.append(' ');
      }
      q.append(words[random.nextInt(words.length)]);
    }
    return new LabelledQuery("synq-" + j, q.toString(), id(t));
  }

  /** Targets {@code 0..n-1}, generated when read. */
  public List<TargetText> targets(int n) {
    return new AbstractList<>() {
      @Override
      public TargetText get(int i) {
        return target(i);
      }

      @Override
      public int size() {
        return n;
      }
    };
  }

  /** Queries {@code from..from+n-1} over the first {@code targetCount} targets. */
  public List<LabelledQuery> queries(int from, int n, int targetCount) {
    return new AbstractList<>() {
      @Override
      public LabelledQuery get(int j) {
        return query(from + j, targetCount);
      }

      @Override
      public int size() {
        return n;
      }
    };
  }

  private static String id(int i) {
    return "syn-" + i;
  }

  private String text(int i) {
    SplittableRandom random = new SplittableRandom(mix(seed, i));
    int length = lengths[random.nextInt(lengths.length)];
    StringBuilder text = new StringBuilder();
    for (int k = 0; k < length; k++) {
      if (k > 0) {
        text.append(' ');
      }
      text.append(vocabulary[wordStream[random.nextInt(wordStream.length)]]);
    }
    return text.toString();
  }

  /** SplitMix64's finaliser over seed and index: independent streams per target and query. */
  private static long mix(long seed, long i) {
    long z = seed + (i + 1) * 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
