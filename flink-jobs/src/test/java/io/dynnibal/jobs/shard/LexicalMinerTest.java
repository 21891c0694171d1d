package io.dynnibal.jobs.shard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.lexical.Bm25Index;
import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.state.ShardIndex;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.QueryBatch;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.flink.metrics.SimpleCounter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The {@code bm25} sampler's shard miner against a BM25 index built from scratch over the same
 * texts (the brute-force peer), on random texts over a small vocabulary: what it offers, and that
 * it stays current as targets join, change and leave the shard.
 */
class LexicalMinerTest {
  private static final String[] WORDS = HardNegativeMinersTest.WORDS;
  private static final int DIMENSION = 8;
  private static final int PER_EXAMPLE = 3;

  private final SplittableRandom random = new SplittableRandom(17);
  private final Map<String, String> texts = new LinkedHashMap<>();
  private final LexicalMiner miner =
      (LexicalMiner) HardNegativeMiner.of(settings(), new SimpleCounter());
  private ShardIndex tree;

  @AfterEach
  void close() {
    miner.close();
  }

  private static ShardSettings settings() {
    return ShardSettings.of(
        new TrainingJobConfig()
            .apply("sampler", "bm25")
            .apply("negatives.mode", "sample")
            .apply("negatives.per.example", Integer.toString(PER_EXAMPLE))
            .apply("landmarks", Integer.toString(DIMENSION))
            .validate());
  }

  private String text() {
    StringBuilder s = new StringBuilder();
    for (int w = 0; w < 3 + random.nextInt(4); w++) {
      s.append(WORDS[random.nextInt(WORDS.length)]).append(' ');
    }
    return s.toString().trim();
  }

  private float[] vector() {
    float[] v = new float[DIMENSION];
    for (int i = 0; i < DIMENSION; i++) {
      v[i] = (float) random.nextGaussian();
    }
    return v;
  }

  /** A shard key of {@code n} random targets (their trees' vectors play no part in BM25). */
  private void shardOf(int n) {
    List<String> ids = new ArrayList<>();
    List<float[]> vectors = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String id = "t" + i;
      texts.put(id, text());
      ids.add(id);
      vectors.add(vector());
    }
    tree = ShardIndex.build(DIMENSION, 1.3, ids, vectors, 3);
  }

  private HardNegativeMiner.Shard shard() {
    return new HardNegativeMiner.Shard(0, tree, this::stored, texts::get, null, tree.size());
  }

  private TargetFeatures stored(String id) {
    return texts.containsKey(id) ? new TargetFeatures(id, new int[0], new float[0], null) : null;
  }

  /** Offers per query for queries {@code queries} with positives {@code positives}. */
  private List<List<TargetFeatures>> mine(List<String> queries, List<String> positives)
      throws Exception {
    QueryBatch batch = new QueryBatch();
    batch.batchId = 1;
    batch.pairIds = queries.stream().map(q -> "p" + q).toArray(String[]::new);
    batch.queryTexts = queries.toArray(new String[0]);
    batch.targetIds = positives.toArray(new String[0]);
    List<Features> features = queries.stream().map(q -> (Features) null).toList();
    HardNegativeMiner.Mined mined = miner.mine(shard(), features, batch, new SplittableRandom(1));
    List<List<TargetFeatures>> out = new ArrayList<>();
    queries.forEach(q -> out.add(new ArrayList<>()));
    for (int i = 0; i < mined.targets().size(); i++) {
      assertTrue(Float.isNaN(mined.logProbabilities().get(i)), "chosen, not drawn");
      out.get(mined.queryOf().get(i)).add(mined.targets().get(i));
    }
    return out;
  }

  /**
   * The best targets but the positive with their scores, as an index built now over the tree's
   * texts ranks them.
   */
  private List<Bm25Index.Hit> expected(String query, String positive) {
    try (Bm25Index fresh = new Bm25Index()) {
      for (String id : tree.ids()) {
        fresh.upsert(id, texts.get(id));
      }
      return fresh.search(query, tree.size()).stream()
          .filter(h -> !h.id().equals(positive))
          .toList();
    }
  }

  /**
   * Each query is offered the targets a fresh index ranks best: the same list where nothing has
   * left the index; once targets have left, within {@code tolerance} of the best scores (Lucene
   * keeps a removed text's term statistics until its segment merges, so scores drift a little).
   */
  private void assertOffersAsAFreshIndex(int queries, double tolerance) throws Exception {
    List<String> texts = new ArrayList<>();
    List<String> positives = new ArrayList<>();
    List<String> ids = tree.ids();
    for (int q = 0; q < queries; q++) {
      texts.add(text());
      positives.add(ids.get(random.nextInt(ids.size())));
    }
    List<List<TargetFeatures>> offered = mine(texts, positives);
    for (int q = 0; q < queries; q++) {
      List<Bm25Index.Hit> ranked = expected(texts.get(q), positives.get(q));
      List<String> got = offered.get(q).stream().map(t -> t.id).toList();
      if (tolerance == 0) {
        List<String> best = ranked.stream().limit(PER_EXAMPLE).map(Bm25Index.Hit::id).toList();
        assertEquals(best, got, texts.get(q));
        continue;
      }
      assertEquals(Math.min(PER_EXAMPLE, ranked.size()), got.size(), texts.get(q));
      Map<String, Float> score = new LinkedHashMap<>();
      ranked.forEach(h -> score.put(h.id(), h.score()));
      for (int r = 0; r < got.size(); r++) {
        float best = ranked.get(r).score();
        float mine = score.getOrDefault(got.get(r), 0f);
        assertEquals(best, mine, tolerance * best, texts.get(q) + ": rank " + r + " " + got);
      }
    }
  }

  @Test
  void theModeIsTopKWhateverTheSettingSays() {
    assertEquals(NegativesMode.TOP_K, settings().negativesMode());
  }

  @Test
  void eachQueryIsOfferedItsBestTargetsButItsPositiveWithTheirScores() throws Exception {
    shardOf(300);
    assertOffersAsAFreshIndex(40, 0);
    String query = texts.get("t7");
    List<TargetFeatures> offers = mine(List.of(query), List.of("t7")).get(0);
    assertEquals(PER_EXAMPLE, offers.size());
    assertFalse(offers.stream().anyMatch(t -> t.id.equals("t7")));
    try (Bm25Index fresh = new Bm25Index()) {
      texts.forEach(fresh::upsert);
      Map<String, Float> scores = new LinkedHashMap<>();
      fresh.search(query, 300).forEach(h -> scores.put(h.id(), h.score()));
      for (TargetFeatures t : offers) {
        assertEquals(scores.get(t.id), t.logit, 1e-5f, t.id);
      }
    }
  }

  @Test
  void targetsThatJoinChangeOrLeaveTheShardAreSeenByTheNextBatch() throws Exception {
    shardOf(200);
    assertOffersAsAFreshIndex(10, 0); // indexes the key
    // Joins: a new target with a word no other has is the best negative of a query of that word.
    texts.put("new", "zebra zebra");
    tree.upsert("new", vector());
    assertEquals("new", mine(List.of("zebra"), List.of("t0")).get(0).get(0).id);
    // Changes: an old target's text now holds the word, and the new one leaves.
    texts.put("t3", "zebra");
    miner.targetChanged(0, "t3");
    texts.remove("new");
    tree.delete("new");
    miner.targetChanged(0, "new");
    List<TargetFeatures> zebra = mine(List.of("zebra"), List.of("t0")).get(0);
    assertEquals("t3", zebra.get(0).id);
    assertFalse(zebra.stream().anyMatch(t -> t.id.equals("new")));
    // Leaves without a word to the miner (an eviction): never offered.
    tree.delete("t3");
    assertFalse(
        mine(List.of("zebra"), List.of("t0")).get(0).stream().anyMatch(t -> t.id.equals("t3")));
    assertOffersAsAFreshIndex(30, 0.05);
  }

  @Test
  void aNewTreeIsReconciledWithTheIndexById() throws Exception {
    shardOf(200);
    assertOffersAsAFreshIndex(10, 0);
    List<String> kept = tree.ids().subList(50, 200);
    List<float[]> vectors = kept.stream().map(id -> vector()).toList();
    tree = ShardIndex.build(DIMENSION, 1.3, kept, vectors, 5); // a restore or a rebuild
    assertOffersAsAFreshIndex(40, 0.05);
  }
}
