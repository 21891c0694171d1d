package io.dynnibal.training;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.features.Features;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A small retrieval task that only training can solve: targets are random words of one vocabulary,
 * queries are a few of their target's words translated through a fixed random dictionary into a
 * disjoint vocabulary. An untrained encoder ranks at chance; the encoder must learn the dictionary
 * from pairs, and evaluation queries are fresh word subsets, so it must generalise, not memorise
 * pairs.
 */
public final class SyntheticRetrievalTask {
  public final List<TargetText> targets = new ArrayList<>();
  public final List<LabelledQuery> train = new ArrayList<>();
  public final List<LabelledQuery> eval = new ArrayList<>();
  private final Random random;
  private final String[] targetWords;
  private final String[] queryWords;
  private final int[][] targetWordIds;

  public SyntheticRetrievalTask(
      int targetCount, int vocabulary, int wordsPerTarget, int trainQueriesPerTarget, long seed) {
    random = new Random(seed);
    targetWords = new String[vocabulary];
    queryWords = new String[vocabulary];
    for (int w = 0; w < vocabulary; w++) {
      targetWords[w] = "t" + randomLetters(6);
      queryWords[w] = "q" + randomLetters(6);
    }
    targetWordIds = new int[targetCount][wordsPerTarget];
    for (int t = 0; t < targetCount; t++) {
      StringBuilder text = new StringBuilder("item" + t);
      for (int i = 0; i < wordsPerTarget; i++) {
        targetWordIds[t][i] = random.nextInt(vocabulary);
        text.append(' ').append(targetWords[targetWordIds[t][i]]);
      }
      targets.add(new TargetText("item" + t, text.toString()));
    }
    for (int t = 0; t < targetCount; t++) {
      for (int k = 0; k < trainQueriesPerTarget; k++) {
        train.add(query(t, "train" + t + "." + k));
      }
      eval.add(query(t, "eval" + t));
    }
  }

  private LabelledQuery query(int target, String id) {
    StringBuilder text = new StringBuilder();
    int[] words = targetWordIds[target];
    for (int i = 0; i < 4; i++) {
      text.append(queryWords[words[random.nextInt(words.length)]]).append(' ');
    }
    return new LabelledQuery(id, text.toString().trim(), "item" + target);
  }

  /** A batch of {@code size} training pairs and {@code uniform} uniform negatives. */
  public TrainingBatch batch(DualEncoder encoder, Random draw, int size, int uniform) {
    List<Features> queries = new ArrayList<>();
    List<String> positiveIds = new ArrayList<>();
    List<Features> positives = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      LabelledQuery q = train.get(draw.nextInt(train.size()));
      queries.add(encoder.featurizeQuery(q.text()));
      positiveIds.add(q.targetId());
      positives.add(
          encoder.featurizeTarget(targets.get(Integer.parseInt(q.targetId().substring(4))).text()));
    }
    List<String> negativeIds = new ArrayList<>();
    List<Features> negatives = new ArrayList<>();
    for (int i = 0; i < uniform; i++) {
      TargetText t = targets.get(draw.nextInt(targets.size()));
      negativeIds.add(t.targetId());
      negatives.add(encoder.featurizeTarget(t.text()));
    }
    return new TrainingBatch(queries, positiveIds, positives, negativeIds, negatives);
  }

  private String randomLetters(int n) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < n; i++) {
      s.append((char) ('a' + random.nextInt(26)));
    }
    return s.toString();
  }
}
