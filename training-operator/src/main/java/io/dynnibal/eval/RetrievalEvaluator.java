package io.dynnibal.eval;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.RowMajor;
import io.dynnibal.model.features.Features;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Encodes every target with the current target tower (never an approximate cache: App. C) and ranks
 * all of them for every query, exactly. The rank of the positive is the number of targets scoring
 * above it plus those tying with it (ties count against the model, so a collapsed encoder that
 * scores everything alike gets recall 0, not 1).
 */
public final class RetrievalEvaluator {
  /** Queries scored per matrix product: 256 x 63,665 floats is 65 MB. */
  private static final int QUERY_BLOCK = 256;

  /**
   * Evaluation owns the machine while it runs (training has stopped), so it encodes on every core.
   */
  private static final int THREADS = Runtime.getRuntime().availableProcessors();

  private RetrievalEvaluator() {}

  public static RetrievalMetrics evaluate(
      DualEncoder encoder, List<TargetText> targets, List<LabelledQuery> queries) {
    List<String> ids = new ArrayList<>(targets.size());
    for (TargetText t : targets) {
      ids.add(t.targetId());
    }
    return evaluate(encoder, ids, features(encoder, targets), queries);
  }

  /**
   * The same with the targets featurized already (features depend only on the feature
   * configuration, not on the parameters): what evaluating many models of one configuration should
   * do.
   */
  public static RetrievalMetrics evaluate(
      DualEncoder encoder,
      List<String> targetIds,
      List<Features> targetFeatures,
      List<LabelledQuery> queries) {
    long start = System.nanoTime();
    return evaluate(encoder, targetIds, encodeTargets(encoder, targetFeatures), queries, start);
  }

  /**
   * Every target's embedding under {@code encoder}: what evaluating one model on several query sets
   * should compute once (it is most of the cost for a transformer).
   */
  public static float[][] encodeTargets(DualEncoder encoder, List<Features> targetFeatures) {
    return encoder.encodeTargets(targetFeatures, THREADS);
  }

  /** The same against targets encoded already ({@link #encodeTargets}). */
  public static RetrievalMetrics evaluate(
      DualEncoder encoder,
      List<String> targetIds,
      float[][] targetVectors,
      List<LabelledQuery> queries,
      long startNanos) {
    List<Features> queryFeatures = new ArrayList<>(queries.size());
    for (LabelledQuery q : queries) {
      queryFeatures.add(encoder.featurizeQuery(q.text()));
    }
    float[][] queryVectors = encoder.encodeQueries(queryFeatures, THREADS);
    Map<String, Integer> index = new HashMap<>();
    for (int i = 0; i < targetIds.size(); i++) {
      index.put(targetIds.get(i), i);
    }
    int[] positives = new int[queries.size()];
    for (int i = 0; i < queries.size(); i++) {
      positives[i] = index.getOrDefault(queries.get(i).targetId(), -1);
    }
    long[] ranks = ranks(encoder.manager(), queryVectors, targetVectors, positives);
    return summarize(ranks, targetIds.size(), (System.nanoTime() - startNanos) / 1e9);
  }

  /**
   * The 0-based rank of each query's positive among all targets ({@code Long.MAX_VALUE} when {@code
   * positives[i]} is -1: unknown target).
   */
  public static long[] ranks(
      NDManager manager, float[][] queries, float[][] targets, int[] positives) {
    long[] ranks = new long[queries.length];
    if (targets.length == 0) {
      java.util.Arrays.fill(ranks, Long.MAX_VALUE);
      return ranks;
    }
    int dim = targets[0].length;
    try (NDManager scope = manager.newSubManager()) {
      NDArray targetMatrix =
          scope.create(RowMajor.flatten(targets, dim), new Shape(targets.length, dim));
      NDArray transposed = targetMatrix.transpose();
      for (int from = 0; from < queries.length; from += QUERY_BLOCK) {
        int to = Math.min(queries.length, from + QUERY_BLOCK);
        try (NDManager block = scope.newSubManager()) {
          NDArray q =
              block.create(RowMajor.flatten(queries, from, to, dim), new Shape(to - from, dim));
          NDArray scores = q.matMul(transposed);
          long[] safe = new long[to - from];
          for (int i = from; i < to; i++) {
            safe[i - from] = Math.max(0, positives[i]);
          }
          NDArray positiveScores = scores.gather(block.create(safe, new Shape(to - from, 1)), 1);
          long[] above = scores.gt(positiveScores).sum(new int[] {1}).toLongArray();
          long[] tied = scores.eq(positiveScores).sum(new int[] {1}).toLongArray();
          for (int i = from; i < to; i++) {
            long rank = above[i - from] + tied[i - from] - 1;
            // A NaN score compares false both ways (rank -1): a broken encoder ranks last, not
            // first.
            ranks[i] = positives[i] < 0 ? Long.MAX_VALUE : rank < 0 ? targets.length : rank;
          }
        }
      }
    }
    return ranks;
  }

  public static RetrievalMetrics summarize(long[] ranks, int targets, double seconds) {
    Map<Integer, Double> recall = new LinkedHashMap<>();
    Map<Integer, Double> mrr = new LinkedHashMap<>();
    int unknown = 0;
    for (long r : ranks) {
      if (r == Long.MAX_VALUE) {
        unknown++;
      }
    }
    for (int k : RetrievalMetrics.RECALL_AT) {
      int hits = 0;
      for (long r : ranks) {
        if (r < k) {
          hits++;
        }
      }
      recall.put(k, ranks.length == 0 ? 0 : (double) hits / ranks.length);
    }
    for (int k : RetrievalMetrics.MRR_AT) {
      double sum = 0;
      for (long r : ranks) {
        if (r < k) {
          sum += 1.0 / (r + 1);
        }
      }
      mrr.put(k, ranks.length == 0 ? 0 : sum / ranks.length);
    }
    return new RetrievalMetrics(ranks.length, unknown, targets, recall, mrr, seconds);
  }

  /** Features of a target list, in order (for callers that keep them). */
  public static List<Features> features(DualEncoder encoder, List<TargetText> targets) {
    List<Features> out = new ArrayList<>(targets.size());
    for (TargetText t : targets) {
      out.add(encoder.featurizeTarget(t.text()));
    }
    return out;
  }
}
