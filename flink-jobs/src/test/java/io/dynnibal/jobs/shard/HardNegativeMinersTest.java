package io.dynnibal.jobs.shard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.negatives.SoftmaxFidelity;
import io.dynnibal.state.ShardIndex;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.QueryBatch;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.apache.flink.metrics.SimpleCounter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Both miners on one shard of real encodings (the version-0 model): what they offer is never a
 * query's own positive, the pool miner equals brute force, and the tree miner's negatives score
 * higher than uniform draws.
 */
class HardNegativeMinersTest {
  /** A small vocabulary the tests' texts draw from. */
  static final String[] WORDS = {
    "audio", "video", "kernel", "python", "library", "driver", "font", "game", "editor", "network",
    "shell", "database", "compiler", "image", "crypto", "mail", "web", "server", "client", "docs"
  };

  private static final int TARGETS = 400;
  private static final int QUERIES = 24;

  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  private static ShardSettings settings(String sampler, int perExample, String mode) {
    return settings(sampler, perExample, mode, 0);
  }

  private static ShardSettings settings(String sampler, int perExample, String mode, int probes) {
    return ShardSettings.of(config(sampler, perExample, mode, probes).validate());
  }

  private static TrainingJobConfig config(String sampler, int perExample, String mode, int probes) {
    return new TrainingJobConfig()
        .apply("sampler", sampler)
        .apply("fidelity.probes", Integer.toString(probes))
        .apply("negatives.per.example", Integer.toString(perExample))
        .apply("negatives.mode", mode)
        .apply("model.buckets", "4096")
        .apply("model.embedding.dim", "16")
        .apply("model.hidden.dim", "32")
        .apply("model.output.dim", "16")
        .apply("landmarks", "8")
        .apply("regression.samples", "16");
  }

  private static String text(SplittableRandom random) {
    StringBuilder s = new StringBuilder();
    for (int w = 0; w < 4; w++) {
      s.append(WORDS[random.nextInt(WORDS.length)]).append(' ');
    }
    return s.toString().trim();
  }

  /** One shard key's targets, encoded by {@code model}, in state and in a heap index. */
  private HardNegativeMiner.Shard shard(ShardModel model) throws Exception {
    SplittableRandom random = new SplittableRandom(11);
    Map<String, TargetFeatures> state = new LinkedHashMap<>();
    List<TargetFeatures> targets = new ArrayList<>();
    List<Features> features = new ArrayList<>();
    for (int i = 0; i < TARGETS; i++) {
      String text = text(random) + " t" + i;
      Features f = model.encoder.featurizeTarget(text);
      targets.add(new TargetFeatures("t" + i, f.ids(), f.weights(), null));
      targets.get(i).text = text;
      features.add(f);
    }
    float[][] caches = model.targetCaches(features);
    for (int i = 0; i < TARGETS; i++) {
      targets.get(i).cache = caches[i];
      state.put(targets.get(i).id, targets.get(i));
    }
    List<String> ids = new ArrayList<>(state.keySet());
    List<float[]> vectors = ids.stream().map(id -> state.get(id).cache.clone()).toList();
    ShardIndex index = ShardIndex.build(8, 1.3, ids, vectors, 3);
    return new HardNegativeMiner.Shard(
        0, index, state::get, id -> state.get(id).text, model, index.size());
  }

  private static QueryBatch batch(ShardModel model, SplittableRandom random, List<Features> out) {
    QueryBatch batch = new QueryBatch();
    batch.batchId = random.nextInt(1000);
    batch.pairIds = new String[QUERIES];
    batch.queryTexts = new String[QUERIES];
    batch.targetIds = new String[QUERIES];
    for (int q = 0; q < QUERIES; q++) {
      batch.pairIds[q] = "p" + q;
      batch.queryTexts[q] = text(random);
      batch.targetIds[q] = "t" + random.nextInt(TARGETS);
      out.add(model.encoder.featurizeQuery(batch.queryTexts[q]));
    }
    return batch;
  }

  @Test
  void thePoolMinerOffersEachQuerysBestTargetsButItsPositiveAsBruteForceRanksThem()
      throws Exception {
    ShardSettings settings = settings("exhaustive", 3, "top-k");
    ShardModel model = ShardModel.initial(settings);
    closing.add(model);
    PoolMiner miner = (PoolMiner) HardNegativeMiner.of(settings, new SimpleCounter());
    closing.add(miner);
    HardNegativeMiner.Shard shard = shard(model);
    List<Features> queries = new ArrayList<>();
    QueryBatch batch = batch(model, new SplittableRandom(5), queries);
    HardNegativeMiner.Mined mined = miner.mine(shard, queries, batch, new SplittableRandom(1));

    float[][] q = model.encoder.encodeQueries(queries);
    List<String> ids = shard.index().ids();
    List<Features> targetFeatures = new ArrayList<>();
    for (String id : ids) {
      targetFeatures.add(Features.of(shard.targets().get(id)));
    }
    float[][] t = model.encoder.encodeTargets(targetFeatures);
    for (int query = 0; query < QUERIES; query++) {
      List<String> expected = bruteForceTop(q[query], t, ids, batch.targetIds[query], 3);
      List<String> got = new ArrayList<>();
      for (int i = 0; i < mined.queryOf().size(); i++) {
        if (mined.queryOf().get(i) == query) {
          got.add(mined.targets().get(i).id);
        }
      }
      assertEquals(expected, got, "query " + query);
    }
    assertEquals(TARGETS * 16L, miner.floats(0));
  }

  @Test
  void exactTopKMiningMeasuresAsFullyFaithful() throws Exception {
    // The probe reads the exhaustive miner's own pool of every target.
    ShardSettings settings = settings("exhaustive", 3, "top-k", 4);
    ShardModel model = ShardModel.initial(settings);
    closing.add(model);
    PoolMiner miner = (PoolMiner) HardNegativeMiner.of(settings, new SimpleCounter());
    closing.add(miner);
    FidelityProbe probe = FidelityProbe.of(settings, miner);
    closing.add(probe);
    HardNegativeMiner.Shard shard = shard(model);
    List<Features> queries = new ArrayList<>();
    QueryBatch batch = batch(model, new SplittableRandom(5), queries);
    HardNegativeMiner.Mined mined = miner.mine(shard, queries, batch, new SplittableRandom(1));
    FidelityProbe.Probed probed = probe.probe(shard, queries, batch, mined);
    assertEquals(4, probed.parts().length);
    for (int query = 0; query < 4; query++) {
      SoftmaxFidelity.Figures f = figures(probed, mined, query, 3, NegativesMode.TOP_K);
      assertEquals(1.0, f.overlapTopk(), 1e-9, "query " + query);
      assertEquals(1.0, f.logitRatio(), 1e-5, "query " + query);
      assertEquals(1.0, f.massRatio(), 1e-5, "query " + query);
    }
  }

  @Test
  void theProbeMeasuresBm25sOffersAsChosen() throws Exception {
    ShardSettings settings = settings("bm25", 3, "sample", 4);
    ShardModel model = ShardModel.initial(settings);
    closing.add(model);
    HardNegativeMiner miner = HardNegativeMiner.of(settings, new SimpleCounter());
    closing.add(miner);
    FidelityProbe probe = new FidelityProbe(4, 3, settings.scoreScale(), 1, 1);
    closing.add(probe);
    HardNegativeMiner.Shard shard = shard(model);
    List<Features> queries = new ArrayList<>();
    QueryBatch batch = batch(model, new SplittableRandom(5), queries);
    HardNegativeMiner.Mined mined = miner.mine(shard, queries, batch, new SplittableRandom(1));
    assertEquals(3 * QUERIES, mined.targets().size());
    FidelityProbe.Probed probed = probe.probe(shard, queries, batch, mined);
    for (int query = 0; query < 4; query++) {
      SoftmaxFidelity.Figures f = figures(probed, mined, query, 3, NegativesMode.TOP_K);
      assertTrue(f.massRatio() > 0 && f.overlapTopk() >= 0, "query " + query + " " + f);
    }
  }

  /** The probe's pool is complete within half a model version's batches, a slice at a time. */
  @Test
  void theProbesPoolIsCompleteWithinHalfAVersion() {
    FidelityProbe probe = new FidelityProbe(2, 1, 20, 1, 100);
    closing.add(probe);
    for (int targets : new int[] {1, 1_000, 31_833, 500_000}) {
      int slice = probe.encodedPerBatch(targets);
      assertTrue(slice * 50L >= targets, targets + " targets, " + slice + " a batch");
      assertTrue(
          slice == FidelityProbe.FEWEST_ENCODED_PER_BATCH || (slice - 1) * 50L < targets,
          "no larger than it takes: " + slice);
    }
    assertEquals(637, probe.encodedPerBatch(31_833));
    assertEquals(31_833, new FidelityProbe(2, 1, 20, 1, 1).encodedPerBatch(31_833));
  }

  @Test
  void theProbeScoresTheTreeMinersOffersAtFullDimension() throws Exception {
    ShardSettings settings = settings("dynnibal-mh", 2, "sample");
    ShardModel model = ShardModel.initial(settings);
    closing.add(model);
    TreeMiner miner = (TreeMiner) HardNegativeMiner.of(settings, new SimpleCounter());
    // A version of one batch: the probe's pool is encoded whole, and this batch is measured.
    FidelityProbe probe = new FidelityProbe(3, 2, settings.scoreScale(), 1, 1);
    closing.add(probe);
    HardNegativeMiner.Shard shard = shard(model);
    List<Features> queries = new ArrayList<>();
    QueryBatch batch = batch(model, new SplittableRandom(8), queries);
    HardNegativeMiner.Mined mined = miner.mine(shard, queries, batch, new SplittableRandom(3));
    FidelityProbe.Probed probed = probe.probe(shard, queries, batch, mined);
    float[][] q = model.encoder.encodeQueries(queries);
    for (int i = 0; i < mined.targets().size(); i++) {
      int query = mined.queryOf().get(i);
      if (query >= 3) {
        assertTrue(Float.isNaN(probed.offeredLogits()[i]), "only probe queries are scored");
        continue;
      }
      float[] t =
          model
              .encoder
              .encodeTargets(List.of(Features.of(shard.targets().get(mined.targets().get(i).id))))[
              0];
      assertEquals(
          settings.scoreScale() * dot(q[query], t), probed.offeredLogits()[i], 1e-3, "offer " + i);
    }
    for (int query = 0; query < 3; query++) {
      SoftmaxFidelity.Figures f = figures(probed, mined, query, 2, NegativesMode.SAMPLE);
      assertTrue(f.massRatio() > 0 && f.logitRatio() > 0, "query " + query + ": " + f);
    }
  }

  private static SoftmaxFidelity.Figures figures(
      FidelityProbe.Probed probed,
      HardNegativeMiner.Mined mined,
      int query,
      int k,
      NegativesMode mode) {
    List<String> ids = new ArrayList<>();
    List<Float> logits = new ArrayList<>();
    for (int i = 0; i < mined.targets().size(); i++) {
      if (mined.queryOf().get(i) == query) {
        ids.add(mined.targets().get(i).id);
        logits.add(probed.offeredLogits()[i]);
      }
    }
    float[] l = new float[logits.size()];
    for (int i = 0; i < l.length; i++) {
      l[i] = logits.get(i);
    }
    return SoftmaxFidelity.measure(List.of(probed.parts()[query]), ids, l, k, mode);
  }

  private static List<String> bruteForceTop(
      float[] query, float[][] targets, List<String> ids, String positive, int k) {
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < targets.length; i++) {
      if (!ids.get(i).equals(positive)) {
        order.add(i);
      }
    }
    order.sort((a, b) -> Double.compare(dot(query, targets[b]), dot(query, targets[a])));
    return order.subList(0, k).stream().map(ids::get).toList();
  }

  @Test
  void thePoolMinerSamplesTheDoseForEveryQueryWithoutItsPositive() throws Exception {
    thePoolMinerDrawsFromTheSoftmaxWithoutThePositive(settings("exhaustive", 3, "sample"), 1);
  }

  /** With a sharpness the draws follow exp(sharpness beta score), and say so. */
  @Test
  void aSharperSoftmaxIsTheOneTheDrawsComeFrom() throws Exception {
    thePoolMinerDrawsFromTheSoftmaxWithoutThePositive(
        ShardSettings.of(
            config("exhaustive", 3, "sample", 0).apply("negatives.sharpness", "2").validate()),
        2);
  }

  private void thePoolMinerDrawsFromTheSoftmaxWithoutThePositive(
      ShardSettings settings, double sharpness) throws Exception {
    double beta = sharpness * settings.scoreScale();
    assertEquals(beta, settings.samplingScale(), 1e-6);
    ShardModel model = ShardModel.initial(settings);
    closing.add(model);
    PoolMiner miner = (PoolMiner) HardNegativeMiner.of(settings, new SimpleCounter());
    closing.add(miner);
    HardNegativeMiner.Shard shard = shard(model);
    List<Features> queries = new ArrayList<>();
    QueryBatch batch = batch(model, new SplittableRandom(6), queries);
    HardNegativeMiner.Mined mined = miner.mine(shard, queries, batch, new SplittableRandom(2));
    // Brute force: every target at full dimension, the softmax over all but the query's positive.
    float[][] q = model.encoder.encodeQueries(queries);
    List<Features> all = new ArrayList<>();
    for (int t = 0; t < TARGETS; t++) {
      all.add(Features.of(shard.targets().get("t" + t)));
    }
    float[][] targets = model.encoder.encodeTargets(all);
    int[] perQuery = new int[QUERIES];
    for (int i = 0; i < mined.queryOf().size(); i++) {
      int query = mined.queryOf().get(i);
      perQuery[query]++;
      String id = mined.targets().get(i).id;
      assertNotEquals(batch.targetIds[query], id);
      double logMass = Double.NEGATIVE_INFINITY;
      for (int t = 0; t < TARGETS; t++) {
        if (!("t" + t).equals(batch.targetIds[query])) {
          double logit = beta * dot(q[query], targets[t]);
          logMass = Math.max(logMass, logit) + Math.log1p(Math.exp(-Math.abs(logMass - logit)));
        }
      }
      double expected = beta * dot(q[query], targets[Integer.parseInt(id.substring(1))]) - logMass;
      assertEquals(expected, mined.logProbabilities().get(i), 1e-3, "the draw's log probability");
    }
    for (int query = 0; query < QUERIES; query++) {
      assertEquals(3, perQuery[query], "query " + query);
      assertTrue(Double.isFinite(mined.logMass()[query]), "query " + query + " has a mass");
    }
  }

  @Test
  void theTreeMinerGivesEveryQueryTheDoseInTopKMode() throws Exception {
    theTreeMinerNeverOffersThePositiveAndItsNegativesBeatUniformDraws("top-k");
  }

  @Test
  void theTreeMinerGivesEveryQueryTheDoseInSampleMode() throws Exception {
    theTreeMinerNeverOffersThePositiveAndItsNegativesBeatUniformDraws("sample");
  }

  @Test
  void theTreeMinerGivesEveryQueryTheDoseWithAProposalExactInsideClusters() throws Exception {
    theTreeMinerNeverOffersThePositiveAndItsNegativesBeatUniformDraws(
        ShardSettings.of(
            config("dynnibal-mh", 2, "sample", 0)
                .apply("mh.exact.inside", "16")
                .apply("mh.exact.targets", "64")
                .validate()),
        "sample, exact inside");
  }

  @Test
  void theTreeMinerDrawsFromTheSharperSoftmax() throws Exception {
    theTreeMinerNeverOffersThePositiveAndItsNegativesBeatUniformDraws(
        ShardSettings.of(
            config("dynnibal-mh", 2, "sample", 0).apply("negatives.sharpness", "2").validate()),
        "sample, sharpness 2");
  }

  @Test
  void theExactCacheMinerGivesEveryQueryTheDoseInSampleMode() throws Exception {
    theTreeMinerNeverOffersThePositiveAndItsNegativesBeatUniformDraws(
        settings("exact-cache", 2, "sample"), "exact-cache, sample");
  }

  @Test
  void theExactCacheMinerGivesEveryQueryTheDoseInTopKMode() throws Exception {
    theTreeMinerNeverOffersThePositiveAndItsNegativesBeatUniformDraws(
        settings("exact-cache", 2, "top-k"), "exact-cache, top-k");
  }

  /**
   * Auto mines a shard of at most its bound of targets as exact-cache does and a larger one as
   * DyNNIBAL-MH does, the same draws from the same generator, and reports which it used.
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void autoMinesAsExactCacheUpToItsBoundAndAsMhAbove(boolean exactly) throws Exception {
    // The bound holds at d' = 64; these tests' caches have 8 dimensions (landmarks), so the shard's
    // TARGETS are within a bound of TARGETS * 8 / 64 and beyond one less.
    int bound = TARGETS * 8 / io.dynnibal.sampler.Auto.REFERENCE_DIMENSION - (exactly ? 0 : 1);
    ShardSettings auto =
        ShardSettings.of(
            config("auto", 2, "sample", 0)
                .apply("auto.exact.max.targets", Integer.toString(bound))
                .validate());
    ShardSettings alone = settings(exactly ? "exact-cache" : "dynnibal-mh", 2, "sample");
    ShardModel model = ShardModel.initial(auto);
    closing.add(model);
    HardNegativeMiner.Shard shard = shard(model);
    List<Features> queries = new ArrayList<>();
    QueryBatch batch = batch(model, new SplittableRandom(3), queries);
    Map<Integer, Boolean> reported = new HashMap<>();
    HardNegativeMiner.Mined byAuto =
        HardNegativeMiner.of(auto, new SimpleCounter(), reported::put)
            .mine(shard, queries, batch, new SplittableRandom(9));
    HardNegativeMiner.Mined byItself =
        HardNegativeMiner.of(alone, new SimpleCounter())
            .mine(shard, queries, batch, new SplittableRandom(9));
    assertEquals(Map.of(shard.key(), exactly), reported);
    assertEquals(byItself.queryOf(), byAuto.queryOf());
    assertEquals(
        byItself.targets().stream().map(t -> t.id).toList(),
        byAuto.targets().stream().map(t -> t.id).toList());
  }

  private void theTreeMinerNeverOffersThePositiveAndItsNegativesBeatUniformDraws(String mode)
      throws Exception {
    theTreeMinerNeverOffersThePositiveAndItsNegativesBeatUniformDraws(
        settings("dynnibal-mh", 2, mode), mode);
  }

  private void theTreeMinerNeverOffersThePositiveAndItsNegativesBeatUniformDraws(
      ShardSettings settings, String mode) throws Exception {
    ShardModel model = ShardModel.initial(settings);
    closing.add(model);
    TreeMiner miner = (TreeMiner) HardNegativeMiner.of(settings, new SimpleCounter());
    HardNegativeMiner.Shard shard = shard(model);
    SplittableRandom random = new SplittableRandom(7);
    double mined = 0;
    double uniform = 0;
    int count = 0;
    for (int round = 0; round < 5; round++) {
      List<Features> queries = new ArrayList<>();
      QueryBatch batch = batch(model, random, queries);
      float[][] z = model.queryCaches(queries);
      HardNegativeMiner.Mined result = miner.mine(shard, queries, batch, random);
      if (settings.sampler() instanceof io.dynnibal.sampler.DynnibalMh) {
        assertTrue(result.proposals() > 0, "MH counts its proposals");
      }
      Set<Integer> seen = new HashSet<>();
      for (int i = 0; i < result.targets().size(); i++) {
        int query = result.queryOf().get(i);
        TargetFeatures negative = result.targets().get(i);
        seen.add(query);
        assertNotEquals(batch.targetIds[query], negative.id, "a query's positive is never offered");
        TargetFeatures stored = shard.targets().get(negative.id);
        assertNotNull(stored);
        // Scores on the scale of the softmax the draws follow (sharpness x beta in sample mode).
        double beta = settings.samplingScale();
        float logit = (float) (beta * dot(z[query], stored.cache));
        // The tree holds the cache in 8 bits per coordinate: each off by 1/127 of the largest.
        double largest = 0;
        for (float c : stored.cache) {
          largest = Math.max(largest, Math.abs(c));
        }
        double zNorm1 = 0;
        for (float c : z[query]) {
          zNorm1 += Math.abs(c);
        }
        assertEquals(
            logit,
            negative.logit,
            beta * zNorm1 * largest / 127 + 1e-3 * (1 + Math.abs(logit)),
            "the logit is beta <z_q, z_t>");
        mined += negative.logit;
        String drawn = shard.index().uniform(random);
        uniform += beta * dot(z[query], shard.targets().get(drawn).cache);
        count++;
      }
      int[] perQuery = new int[QUERIES];
      result.queryOf().forEach(q -> perQuery[q]++);
      for (int query = 0; query < QUERIES; query++) {
        assertEquals(2, perQuery[query], mode + ": negatives of query " + query);
        assertTrue(Double.isFinite(result.logMass()[query]), mode + ": mass of query " + query);
      }
      assertEquals(QUERIES, seen.size());
    }
    assertTrue(
        mined / count > uniform / count + 1,
        "mined logits " + mined / count + " vs uniform " + uniform / count);
  }

  /**
   * MH's cluster budget is a share of every target the shard stores with a cache vector, not of the
   * pool's: a pool of a tenth of them (as {@code negatives.pool=positives} holds early in a run) is
   * clustered as finely as the whole shard would be, and its softmax mass is estimated closer to
   * the exact one.
   */
  @Test
  void mhsClusterBudgetIsAShareOfTheShardsTargetsNotOfThePool() throws Exception {
    ShardSettings settings =
        ShardSettings.of(
            config("dynnibal-mh", 1, "sample", 0)
                .apply("mh.exact.inside", "0")
                .apply("mh.cluster.share", "0.05")
                .validate());
    ShardModel model = ShardModel.initial(settings);
    closing.add(model);
    HardNegativeMiner.Shard pool = shard(model); // every stored target in the index
    HardNegativeMiner.Shard tenth =
        new HardNegativeMiner.Shard(
            pool.key(), pool.index(), pool.targets(), pool.texts(), model, 10 * TARGETS);
    double coarse = massError(settings, pool);
    double fine = massError(settings, tenth);
    assertTrue(
        fine < coarse / 2,
        "mean |log mass - exact| over 20 clusters " + coarse + ", over 200 " + fine);
  }

  /** The mean distance of the miner's log softmax mass per query from the exact one, in nats. */
  private static double massError(ShardSettings settings, HardNegativeMiner.Shard shard)
      throws Exception {
    TreeMiner miner = (TreeMiner) HardNegativeMiner.of(settings, new SimpleCounter());
    SplittableRandom random = new SplittableRandom(7);
    List<Features> queries = new ArrayList<>();
    QueryBatch batch = batch(shard.model(), random, queries);
    float[][] z = shard.model().queryCaches(queries);
    HardNegativeMiner.Mined mined = miner.mine(shard, queries, batch, random);
    double beta = settings.samplingScale();
    double error = 0;
    for (int q = 0; q < QUERIES; q++) {
      double max = Double.NEGATIVE_INFINITY;
      List<Double> logits = new ArrayList<>();
      for (String id : shard.index().ids()) {
        if (!id.equals(batch.targetIds[q])) {
          logits.add(beta * dot(z[q], shard.targets().get(id).cache));
          max = Math.max(max, logits.get(logits.size() - 1));
        }
      }
      double sum = 0;
      for (double l : logits) {
        sum += Math.exp(l - max);
      }
      error += Math.abs(mined.logMass()[q] - (max + Math.log(sum)));
    }
    return error / QUERIES;
  }

  private static double dot(float[] a, float[] b) {
    double s = 0;
    for (int i = 0; i < a.length; i++) {
      s += a[i] * b[i];
    }
    return s;
  }
}
