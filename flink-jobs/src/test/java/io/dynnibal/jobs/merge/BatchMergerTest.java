package io.dynnibal.jobs.merge;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.jobs.shard.ShardReply;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.negatives.SoftmaxFidelity;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.MergedBatch;
import io.dynnibal.stream.QueryBatch;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The merge of the shards' replies: picks, masses, inclusions, uniform draws, positives, fidelity.
 */
class BatchMergerTest {
  private static MergedBatch merge(
      List<ShardReply> replies, int perExample, NegativesMode mode, int uniformCount, long seed) {
    return merge(replies, perExample, false, mode, uniformCount, seed);
  }

  private static MergedBatch merge(
      List<ShardReply> replies,
      int perExample,
      boolean candidatesOnly,
      NegativesMode mode,
      int uniformCount,
      long seed) {
    return new BatchMerger(perExample, candidatesOnly, mode, uniformCount, seed).merge(replies);
  }

  @Test
  void topKGivesEachQueryItsBestAcrossShardsAndTheBatchSharesTheUnion() {
    QueryBatch batch = batch(2);
    ShardReply a =
        reply(
            batch,
            0,
            10,
            new int[] {0, 0, 1},
            new String[] {"a1", "a2", "b1"},
            new float[] {9, 5, 7});
    ShardReply b =
        reply(batch, 1, 10, new int[] {0, 1}, new String[] {"c1", "d1"}, new float[] {8, 1});
    MergedBatch merged = merge(new ArrayList<>(List.of(b, a)), 2, NegativesMode.TOP_K, 0, 1);
    // Query 0 ranks a1 (9), c1 (8), a2 (5); query 1 ranks b1 (7), d1 (1).
    assertArrayEquals(new String[] {"a1", "c1", "b1", "d1"}, ids(merged.sampled));
  }

  @Test
  void forReScoringEachQuerysPicksGoOnAsItsCandidatesAndNothingIsSharedYet() {
    QueryBatch batch = batch(2);
    ShardReply a =
        reply(
            batch,
            0,
            10,
            new int[] {0, 0, 1},
            new String[] {"a1", "a2", "b1"},
            new float[] {9, 5, 7});
    MergedBatch merged = merge(new ArrayList<>(List.of(a)), 2, true, NegativesMode.TOP_K, 0, 1);
    assertEquals(0, merged.sampled.length);
    assertArrayEquals(new String[] {"a1", "a2", "b1"}, ids(merged.candidates));
    assertArrayEquals(new int[] {0, 0, 1}, merged.candidateQuery);
  }

  @Test
  void theUnionHoldsEachTargetOnceAndNoBatchPositive() {
    QueryBatch batch = batch(2); // positives t0, t1
    ShardReply a =
        reply(
            batch,
            0,
            10,
            new int[] {0, 0, 1, 1},
            new String[] {"x", "t1", "x", "y"},
            new float[] {3, 2, 3, 1});
    MergedBatch merged = merge(new ArrayList<>(List.of(a)), 2, NegativesMode.TOP_K, 0, 1);
    // t1 is query 1's positive: already every query's candidate, never a shared negative.
    assertArrayEquals(new String[] {"x", "y"}, ids(merged.sampled));
  }

  @Test
  void sampleModePicksShardsInProportionToTheirMass() {
    // Shard 0 holds three times shard 1's softmax mass for the query: a pick comes from it with
    // probability 3/4, whatever the order of the replies.
    int fromHeavy = 0;
    int picks = 0;
    for (long id = 0; id < 400; id++) {
      QueryBatch batch = batch(1);
      batch.batchId = id;
      ShardReply heavy =
          reply(batch, 0, 10, new int[] {0, 0}, new String[] {"h1", "h2"}, new float[] {1, 1});
      heavy.logMass = new double[] {Math.log(3)};
      ShardReply light =
          reply(batch, 1, 10, new int[] {0, 0}, new String[] {"l1", "l2"}, new float[] {5, 5});
      light.logMass = new double[] {0};
      MergedBatch merged =
          merge(new ArrayList<>(List.of(light, heavy)), 1, NegativesMode.SAMPLE, 0, 3);
      assertEquals(1, merged.sampled.length);
      picks++;
      fromHeavy += merged.sampled[0].id.startsWith("h") ? 1 : 0;
    }
    double share = fromHeavy / (double) picks;
    // Binomial(400, 0.75): standard deviation 0.022; a top-k merge would always take "l1" (logit
    // 5).
    assertTrue(share > 0.68 && share < 0.82, "share of the heavy shard: " + share);
  }

  @Test
  void eachSharedNegativeCarriesTheChanceThatTheBatchsDrawsIncludedIt() {
    // Query 0's pick comes from shard 0 with probability 3/4, and shard 0's draw is "h1" with
    // probability 0.2; query 1's comes from shard 1 alone, whose draw is "l1" with probability 0.5.
    QueryBatch batch = batch(2);
    ShardReply heavy = reply(batch, 0, 10, new int[] {0}, new String[] {"h1"}, new float[] {1});
    heavy.logMass = new double[] {Math.log(3), Double.NEGATIVE_INFINITY};
    heavy.sampledLogProbabilities = new float[] {(float) Math.log(0.2)};
    ShardReply light = reply(batch, 1, 10, new int[] {1}, new String[] {"l1"}, new float[] {1});
    light.logMass = new double[] {0, 0};
    light.sampledLogProbabilities = new float[] {(float) Math.log(0.5)};
    MergedBatch sampled =
        merge(new ArrayList<>(List.of(heavy, light)), 1, NegativesMode.SAMPLE, 0, 3);
    assertArrayEquals(new String[] {"h1", "l1"}, ids(sampled.sampled));
    assertArrayEquals(new float[] {0.75f * 0.2f, 0.5f}, sampled.sampledInclusion, 1e-6f);
    MergedBatch chosen =
        merge(new ArrayList<>(List.of(heavy, light)), 1, NegativesMode.TOP_K, 0, 3);
    assertArrayEquals(new float[] {1f, 1f}, chosen.sampledInclusion, "top-k picks are certain");
  }

  @Test
  void aShardWithoutAMassCountsAsTheOthersMean() {
    assertEquals(
        Math.log(4), ShardMasses.totalLogMass(new double[] {Math.log(2), Double.NaN}), 1e-12);
    assertEquals(
        Math.log(5), ShardMasses.totalLogMass(new double[] {Math.log(2), Math.log(3)}), 1e-12);
    assertTrue(Double.isNaN(ShardMasses.totalLogMass(new double[] {Double.NaN, Double.NaN})));
  }

  @Test
  void sampleModeTakesEachShardsDrawsInOrderAndFallsBackWhenOneRunsOut() {
    List<List<TargetFeatures>> byShard =
        List.of(List.of(target("a1"), target("a2")), List.of(target("b1")));
    // Shard 1 has all the mass but one draw: the second and third picks must come from shard 0.
    List<TargetFeatures> picks =
        Picks.byMass(byShard, new double[] {-50, 0}, 3, new java.util.SplittableRandom(1));
    assertArrayEquals(new String[] {"b1", "a1", "a2"}, ids(picks.toArray(new TargetFeatures[0])));
  }

  @Test
  void positivesComeFromTheShardHoldingThemAndUnknownOnesStayEmpty() {
    QueryBatch batch = batch(3);
    ShardReply a = reply(batch, 0, 5, new int[0], new String[0], new float[0]);
    a.positiveQuery = new int[] {2};
    a.positives = new TargetFeatures[] {target("t2")};
    ShardReply b = reply(batch, 1, 5, new int[0], new String[0], new float[0]);
    b.positiveQuery = new int[] {0};
    b.positives = new TargetFeatures[] {target("t0")};
    MergedBatch merged = merge(new ArrayList<>(List.of(a, b)), 0, NegativesMode.SAMPLE, 0, 1);
    assertEquals("t0", merged.positives[0].id);
    assertNull(merged.positives[1].id);
    assertEquals("t2", merged.positives[2].id);
    assertEquals(10, merged.indexTargets);
  }

  @Test
  void uniformDrawsFollowShardSizes() {
    QueryBatch batch = batch(1);
    int fromBig = 0;
    int total = 0;
    for (long id = 0; id < 200; id++) {
      batch.batchId = id;
      ShardReply big = reply(batch, 0, 900, new int[0], new String[0], new float[0]);
      big.uniform = uniform("big", 20);
      ShardReply small = reply(batch, 1, 100, new int[0], new String[0], new float[0]);
      small.uniform = uniform("small", 20);
      MergedBatch merged =
          merge(new ArrayList<>(List.of(big, small)), 0, NegativesMode.SAMPLE, 20, 7);
      for (TargetFeatures t : merged.uniform) {
        total++;
        fromBig += t.id.startsWith("big") ? 1 : 0;
      }
    }
    double share = fromBig / (double) total;
    assertTrue(
        share > 0.87 && share < 0.93, "share from the shard holding 90% of targets: " + share);
  }

  @Test
  void theProbeQueriesFidelityComesFromEveryShardsExactPartAndTheMergedPicks() {
    QueryBatch batch = batch(2);
    // Exact logits: shard 0 holds a1 (9), a2 (5), x (8); shard 1 holds c1 (8.5), d1 (1).
    ShardReply a =
        reply(
            batch,
            0,
            3,
            new int[] {0, 0, 1},
            new String[] {"a1", "a2", "b1"},
            new float[] {9, 5, 7});
    ShardReply b =
        reply(batch, 1, 2, new int[] {0, 1}, new String[] {"c1", "d1"}, new float[] {8, 1});
    a.probes =
        new SoftmaxFidelity.Part[] {
          SoftmaxFidelity.Part.of(List.of("a1", "a2", "x"), new float[] {9, 5, 8}, -1, 16)
        };
    a.sampledExactLogits = new float[] {9, 5, Float.NaN};
    b.probes =
        new SoftmaxFidelity.Part[] {
          SoftmaxFidelity.Part.of(List.of("c1", "d1"), new float[] {8.5f, 1}, -1, 16)
        };
    b.sampledExactLogits = new float[] {8.5f, Float.NaN};
    MergedBatch merged = merge(new ArrayList<>(List.of(a, b)), 2, NegativesMode.TOP_K, 0, 1);
    // Query 0 picks a1 and c1 (offered at 9 and 8); the exact top-2 is a1 (9), c1 (8.5).
    SoftmaxFidelity.Figures expected =
        SoftmaxFidelity.measure(
            List.of(a.probes[0], b.probes[0]),
            List.of("a1", "c1"),
            new float[] {9, 8.5f},
            2,
            NegativesMode.TOP_K);
    assertEquals(1.0, merged.fidelityOverlapTopk, 1e-9);
    assertEquals(expected.logitRatio(), merged.fidelityLogitRatio, 1e-9);
    assertEquals(expected.massRatio(), merged.fidelityMassRatio, 1e-9);
    assertTrue(Double.isNaN(merged.fidelityNormaliserError), "no shard estimated a mass");
    // The shards' masses for query 0 add up to the exact normaliser less half a nat.
    double exact = Math.log(Math.exp(9) + Math.exp(5) + Math.exp(8) + Math.exp(8.5) + Math.exp(1));
    a.logMass = new double[] {Math.log(0.5) + exact - 0.5, 0};
    b.logMass = new double[] {Math.log(0.5) + exact - 0.5, 0};
    MergedBatch estimated = merge(new ArrayList<>(List.of(a, b)), 2, NegativesMode.TOP_K, 0, 1);
    assertEquals(-0.5, estimated.fidelityNormaliserError, 1e-6);
    MergedBatch unprobed =
        merge(
            new ArrayList<>(
                List.of(reply(batch, 0, 3, new int[] {0}, new String[] {"a1"}, new float[] {9}))),
            2,
            NegativesMode.TOP_K,
            0,
            1);
    assertTrue(Double.isNaN(unprobed.fidelityMassRatio), "no probes, no figures");
  }

  private static QueryBatch batch(int n) {
    QueryBatch b = new QueryBatch();
    b.batchId = 1;
    b.pairIds = new String[n];
    b.queryTexts = new String[n];
    b.targetIds = new String[n];
    for (int i = 0; i < n; i++) {
      b.pairIds[i] = "p" + i;
      b.queryTexts[i] = "query " + i;
      b.targetIds[i] = "t" + i;
    }
    return b;
  }

  private static ShardReply reply(
      QueryBatch batch, int shard, int size, int[] queries, String[] ids, float[] logits) {
    ShardReply r = new ShardReply();
    r.batchId = batch.batchId;
    r.batch = batch;
    r.shard = shard;
    r.shardSize = size;
    r.sampledQuery = queries;
    r.sampled = new TargetFeatures[ids.length];
    for (int i = 0; i < ids.length; i++) {
      r.sampled[i] = target(ids[i]);
      r.sampled[i].logit = logits[i];
    }
    r.uniform = new TargetFeatures[0];
    r.positiveQuery = new int[0];
    r.positives = new TargetFeatures[0];
    return r;
  }

  private static TargetFeatures[] uniform(String prefix, int n) {
    TargetFeatures[] out = new TargetFeatures[n];
    for (int i = 0; i < n; i++) {
      out[i] = target(prefix + i);
    }
    return out;
  }

  private static TargetFeatures target(String id) {
    return new TargetFeatures(id, new int[] {1}, new float[] {1f}, new float[] {0f});
  }

  private static String[] ids(TargetFeatures[] targets) {
    String[] ids = new String[targets.length];
    for (int i = 0; i < targets.length; i++) {
      ids[i] = targets[i].id;
    }
    return ids;
  }
}
