package io.dynnibal.eval;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.lexical.Bm25Index;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;

/**
 * The lexical baseline every trained model is shown next to: BM25 ({@link Bm25Index}: Lucene's
 * BM25, k1 = {@value Bm25Index#K1}, b = {@value Bm25Index#B}) over the targets' texts. Ranks beyond
 * the deepest cut-off reported count as misses; ties keep the index order.
 */
public final class Bm25Baseline implements AutoCloseable {
  private final Bm25Index index = new Bm25Index();
  private final Set<String> targetIds = new HashSet<>();

  private Bm25Baseline(List<TargetText> targets) {
    for (TargetText t : targets) {
      index.upsert(t.targetId(), t.text());
      targetIds.add(t.targetId());
    }
  }

  public static Bm25Baseline of(List<TargetText> targets) {
    return new Bm25Baseline(targets);
  }

  /** The best {@code k} target ids for a query, best first. */
  public List<String> search(String query, int k) {
    List<String> ids = new ArrayList<>(k);
    for (Bm25Index.Hit hit : index.search(query, k)) {
      ids.add(hit.id());
    }
    return ids;
  }

  /** R@k and MRR@k of BM25 on {@code queries}, as {@link RetrievalEvaluator} reports a model's. */
  public RetrievalMetrics evaluate(List<LabelledQuery> queries) {
    long start = System.nanoTime();
    int depth =
        IntStream.concat(
                IntStream.of(RetrievalMetrics.RECALL_AT), IntStream.of(RetrievalMetrics.MRR_AT))
            .max()
            .orElseThrow();
    long[] ranks = new long[queries.size()];
    for (int i = 0; i < queries.size(); i++) {
      LabelledQuery q = queries.get(i);
      if (!targetIds.contains(q.targetId())) {
        ranks[i] = Long.MAX_VALUE;
        continue;
      }
      int rank = search(q.text(), depth).indexOf(q.targetId());
      // Not among BM25's results (no shared word, or deeper than any cut-off): a miss at every k.
      ranks[i] = rank < 0 ? Long.MAX_VALUE - 1 : rank;
    }
    return RetrievalEvaluator.summarize(ranks, index.size(), (System.nanoTime() - start) / 1e9);
  }

  /** The same, for a targets list. */
  public static RetrievalMetrics evaluate(List<TargetText> targets, List<LabelledQuery> queries) {
    try (Bm25Baseline bm25 = of(targets)) {
      return bm25.evaluate(queries);
    }
  }

  @Override
  public void close() {
    index.close();
  }
}
