package io.dynnibal.tests.training;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A retrieval corpus only training can solve: targets are random words of one vocabulary; queries
 * are a few of their target's words translated through a fixed random dictionary into a disjoint
 * vocabulary, so an untrained encoder ranks at chance and the trained one must have learnt the
 * dictionary. Evaluation queries are fresh word draws.
 */
public final class SyntheticCorpus {
  public final List<TargetText> targets = new ArrayList<>();
  public final List<LabelledQuery> train = new ArrayList<>();
  public final List<LabelledQuery> eval = new ArrayList<>();
  private final Random random;
  private final String[] queryWords;
  private final int[][] words;

  public SyntheticCorpus(
      int targetCount, int vocabulary, int wordsPerTarget, int queriesPerTarget, long seed) {
    random = new Random(seed);
    String[] targetWords = new String[vocabulary];
    queryWords = new String[vocabulary];
    for (int w = 0; w < vocabulary; w++) {
      targetWords[w] = "t" + letters(6);
      queryWords[w] = "q" + letters(6);
    }
    words = new int[targetCount][wordsPerTarget];
    for (int t = 0; t < targetCount; t++) {
      StringBuilder text = new StringBuilder("item" + t);
      for (int i = 0; i < wordsPerTarget; i++) {
        words[t][i] = random.nextInt(vocabulary);
        text.append(' ').append(targetWords[words[t][i]]);
      }
      targets.add(new TargetText("item" + t, text.toString()));
    }
    for (int t = 0; t < targetCount; t++) {
      for (int k = 0; k < queriesPerTarget; k++) {
        train.add(query(t, "q:item" + t + "." + k));
      }
      eval.add(query(t, "eval:item" + t));
    }
  }

  public LabelledQuery query(int target, String id) {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < 4; i++) {
      text.append(queryWords[words[target][random.nextInt(words[target].length)]]).append(' ');
    }
    return new LabelledQuery(id, text.toString().trim(), "item" + target);
  }

  private String letters(int n) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < n; i++) {
      s.append((char) ('a' + random.nextInt(26)));
    }
    return s.toString();
  }
}
