package io.dynnibal.state;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.Int8Quantizer;
import io.dynnibal.index.nystrom.CacheMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.runtime.PojoSerializer;
import org.junit.jupiter.api.Test;

/**
 * A shard's targets as they move through model versions: what the state ships and what an index
 * built from it holds must equal every map applied in turn to the vectors as encoded, whether the
 * maps were composed per base or the targets rewritten.
 */
class ShardTargetsTest {
  private static final int D = 4;

  private final HeapMapState<String, TargetFeatures> map =
      new HeapMapState<>(ShardTargetsTest::copy);
  private final HeapValueState<CacheBases> bases = new HeapValueState<>();
  private final AtomicInteger featurized = new AtomicInteger();
  private final ShardTargets targets =
      new ShardTargets(
          map,
          bases,
          t -> {
            featurized.incrementAndGet();
            t.featureIds = new int[] {t.text.length()};
            t.featureWeights = new float[] {1f};
          });

  /** A stored value's copy, as RocksDB hands one out. */
  static TargetFeatures copy(TargetFeatures t) {
    TargetFeatures c = t.withoutCache(t.logit);
    c.text = t.text;
    c.cache = t.cache == null ? null : t.cache.clone();
    c.encodedAt = t.encodedAt;
    return c;
  }

  private static float[] vector(String id) {
    SplittableRandom random = new SplittableRandom(id.hashCode());
    float[] v = new float[D];
    for (int j = 0; j < D; j++) {
      v[j] = (float) random.nextGaussian();
    }
    return v;
  }

  /** Stores and encodes targets {@code from..to-1} at {@code version}. */
  private void encode(int from, int to, long version) throws Exception {
    List<TargetFeatures> group = new ArrayList<>();
    for (int i = from; i < to; i++) {
      targets.store("t" + i, "text of t" + i, version);
      TargetFeatures t = targets.withFeatures("t" + i);
      t.cache = vector(t.id);
      group.add(t);
    }
    targets.encoded(group, version);
  }

  private static CacheMap random(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    float[] m = new float[D * D];
    for (int i = 0; i < m.length; i++) {
      m[i] = (float) (random.nextGaussian() * 0.3 + (i % (D + 1) == 0 ? 1 : 0));
    }
    return new CacheMap(D, m);
  }

  private static float[] moved(float[] v, CacheMap... maps) {
    float[] out = v.clone();
    for (CacheMap m : maps) {
      m.applyInPlace(out, new float[D]);
    }
    return out;
  }

  private void assertShipped(String id, float[] expected, long version) throws Exception {
    TargetFeatures t = targets.shippedWithCache(List.of(id), version).get(0);
    assertArrayEquals(expected, t.cache, 1e-4f, id);
    assertEquals(version, t.version);
    assertNotNull(t.featureIds, "shipped with its features");
    assertNull(t.text, "the text stays in the state");
  }

  @Test
  void aMapMovesWhatIsShippedButRewritesNoTarget() throws Exception {
    encode(0, 50, 0);
    CacheMap a = random(1);
    assertEquals(50, targets.move(a, 0));
    assertShipped("t7", moved(vector("t7"), a), 1);
    assertArrayEquals(vector("t7"), map.get("t7").cache, "stored at its base, untouched");
    assertEquals(0, map.get("t7").version);
  }

  @Test
  void anIndexOfTheNamedTargetsHoldsThoseAndNoOthers() throws Exception {
    encode(0, 20, 0);
    ShardIndex named =
        buildIndex(targets, D, 1.3, 5, 0, Set.of("t3", "t5", "t99")::contains, id -> {});
    assertEquals(List.of("t3", "t5"), named.ids().stream().sorted().toList());
    assertEquals(20, buildIndex(targets, D, 1.3, 5, 0, id -> true, id -> {}).size());
  }

  @Test
  void theStateHoldsTextsAndNoFeatures() throws Exception {
    encode(0, 3, 0);
    TargetFeatures stored = map.get("t1");
    assertEquals("text of t1", stored.text);
    assertNull(stored.featureIds);
    int before = featurized.get();
    assertArrayEquals(new int[] {"text of t1".length()}, targets.shipped("t1", 0f, 0).featureIds);
    assertEquals(before + 1, featurized.get(), "features are recomputed from the text");
  }

  @Test
  void anIndexBuiltAfterSeveralMapsHoldsTheVectorsMovedByEachInTurn() throws Exception {
    encode(0, 40, 0);
    CacheMap a = random(1);
    CacheMap b = random(2);
    targets.move(a, 0);
    encode(40, 60, 1); // encoded between updates: a second base
    targets.move(b, 1);
    ShardIndex index = buildIndex(targets, D, 1.3, 5, 2, id -> true, id -> {});
    assertEquals(60, index.size());
    assertArrayEquals(Int8Quantizer.snap(moved(vector("t3"), a, b)), index.vectorOf("t3"), 1e-4f);
    assertArrayEquals(Int8Quantizer.snap(moved(vector("t45"), b)), index.vectorOf("t45"), 1e-4f);
    assertShipped("t45", moved(vector("t45"), b), 2);
    assertEquals(2, bases.value().size());
  }

  @Test
  void aBaseLeavesWithItsLastTarget() throws Exception {
    encode(0, 5, 0);
    targets.move(random(1), 0);
    encode(5, 7, 1);
    assertEquals(2, bases.value().size());
    targets.remove("t5", 1);
    targets.store("t6", "changed", 1); // replaced: waiting to be encoded again
    assertEquals(1, bases.value().size());
  }

  @Test
  void tooManyBasesRewriteTheOlderTargetsAtTheCurrentVersion() throws Exception {
    List<CacheMap> maps = new ArrayList<>();
    for (int v = 0; v <= CacheBases.MAX_BASES; v++) {
      encode(v * 3, v * 3 + 3, v);
      CacheMap m = random(10 + v);
      maps.add(m);
      targets.move(m, v);
    }
    long current = CacheBases.MAX_BASES + 1;
    encode(100, 102, current);
    assertTrue(bases.value().size() <= CacheBases.MAX_BASES, "bases " + bases.value().size());
    // The ninth base (version MAX_BASES) was one too many: every older target was rewritten at it.
    assertEquals(CacheBases.MAX_BASES, map.get("t0").version);
    assertEquals(CacheBases.MAX_BASES, map.get("t4").version);
    float[] expected = moved(vector("t0"), maps.toArray(new CacheMap[0]));
    assertShipped("t0", expected, current);
    ShardIndex index = buildIndex(targets, D, 1.3, 5, current, id -> true, id -> {});
    assertEquals(3 * (CacheBases.MAX_BASES + 1) + 2, index.size());
    assertArrayEquals(Int8Quantizer.snap(expected), index.vectorOf("t0"), 1e-4f);
  }

  @Test
  void anExactReEncodeRewritesEveryEncodedTargetFromItsTextAndLeavesWaitingOnesAlone()
      throws Exception {
    encode(0, 30, 0);
    targets.move(random(1), 0);
    targets.store("waiting", "not encoded yet", 1);
    List<String> encoded = new ArrayList<>();
    int n =
        targets.reencode(
            group -> {
              for (TargetFeatures t : group) {
                assertNotNull(t.featureIds, "encoded from features recomputed from the text");
                encoded.add(t.id);
                t.cache = new float[] {1, 0, 0, 0};
                t.version = 5;
              }
            },
            5,
            7);
    assertEquals(30, n);
    assertEquals(30, encoded.size());
    assertTrue(!encoded.contains("waiting"));
    assertArrayEquals(new float[] {1, 0, 0, 0}, map.get("t0").cache);
    assertNull(map.get("t0").featureIds);
    assertEquals(1, bases.value().size());
    assertShipped("t0", new float[] {1, 0, 0, 0}, 5);
  }

  @Test
  void aTargetAtAVersionNoMapLeadsFromIsStoredAsNotEncodedAndReportedWaiting() throws Exception {
    encode(0, 5, 0);
    TargetFeatures stray = map.get("t2");
    stray.version = 7;
    map.put("t2", stray);
    List<String> waiting = new ArrayList<>();
    ShardIndex index = buildIndex(targets, D, 1.3, 5, 0, id -> true, waiting::add);
    assertEquals(List.of("t2"), waiting);
    assertNull(map.get("t2").cache, "encoded again like a new target");
    assertEquals(4, index.size());
  }

  @Test
  void anIndexBuiltFromStateReportsTheWaitingTargets() throws Exception {
    encode(0, 30, 0);
    targets.store("waiting", "not encoded yet", 0);
    List<String> waiting = new ArrayList<>();
    ShardIndex index = buildIndex(targets, D, 1.3, 5, 0, id -> true, waiting::add);
    assertEquals(30, index.size());
    assertEquals(List.of("waiting"), waiting);
  }

  @Test
  void bothStateValuesAreFlinkPojosSoTheirLayoutCanEvolve() {
    // Kryo (a generic type) would tie every checkpoint to the exact classes of the day.
    for (Class<?> value : List.of(TargetFeatures.class, CacheBases.class)) {
      assertTrue(
          TypeInformation.of(value).createSerializer(new SerializerConfigImpl())
              instanceof PojoSerializer,
          value.getSimpleName());
    }
  }

  @Test
  void stateWrittenBeforeTextsAndBasesIsReadAsItWas() throws Exception {
    // The old layout: features, no text, every record at the key's version, no bases value.
    for (int i = 0; i < 10; i++) {
      TargetFeatures t =
          new TargetFeatures("t" + i, new int[] {i}, new float[] {1f}, vector("t" + i));
      t.version = 3;
      map.put(t.id, t);
    }
    assertArrayEquals(new int[] {4}, targets.shipped("t4", 0f, 3).featureIds);
    CacheMap a = random(1);
    targets.move(a, 3);
    ShardIndex index = buildIndex(targets, D, 1.3, 5, 4, id -> true, id -> {});
    assertEquals(10, index.size());
    assertArrayEquals(Int8Quantizer.snap(moved(vector("t2"), a)), index.vectorOf("t2"), 1e-4f);
    assertEquals(0, featurized.get(), "stored features are used as they are");
  }

  /** The key's index built in bulk over what the state holds, as a shard does without a shape. */
  static ShardIndex buildIndex(
      ShardTargets targets,
      int dimension,
      double base,
      long seed,
      long currentVersion,
      java.util.function.Predicate<String> indexed,
      java.util.function.Consumer<String> waiting)
      throws Exception {
    ShardTargets.Indexed v = targets.indexedVectors(currentVersion, indexed, waiting);
    return ShardIndex.build(dimension, base, v.ids(), v.vectors(), seed);
  }
}
