package io.dynnibal.state;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.Int8Quantizer;
import io.dynnibal.index.VectorMath;
import io.dynnibal.index.nystrom.CacheMap;
import io.dynnibal.index.sampling.FindClustering;
import io.dynnibal.index.sampling.RejectionSampler;
import io.dynnibal.index.sampling.Samples;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ShardIndexTest {
  static final int D = 8;

  static float[] random(SplittableRandom random) {
    float[] v = new float[D];
    for (int j = 0; j < D; j++) {
      v[j] = (float) random.nextGaussian();
    }
    return v;
  }

  /**
   * Targets upserted into a growing index, a tenth of them replacing earlier ones: every target
   * ends up once, with its latest vector, in a sound tree.
   */
  @Test
  void upsertedTargetsEndUpInASoundTreeWithTheirLatestVectors() {
    SplittableRandom random = new SplittableRandom(5);
    ShardIndex index = ShardIndex.empty(D, 1.3);
    Map<String, float[]> expected = new HashMap<>();
    for (int group = 0; group < 12; group++) {
      List<String> ids = new ArrayList<>();
      List<float[]> vectors = new ArrayList<>();
      for (int i = 0; i < 512; i++) {
        // A tenth of each group replaces a target of an earlier group.
        String id =
            group > 0 && i % 10 == 0 ? "t" + random.nextInt(group * 512) : "t" + (group * 512 + i);
        if (ids.contains(id)) {
          continue;
        }
        float[] v = random(random);
        ids.add(id);
        vectors.add(v);
        expected.put(id, v);
      }
      for (int i = 0; i < ids.size(); i++) {
        index.upsert(ids.get(i), vectors.get(i));
      }
    }
    assertEquals(List.of(), index.checkInvariants());
    assertEquals(expected.size(), index.size());
    for (Map.Entry<String, float[]> e : expected.entrySet()) {
      assertArrayEquals(Int8Quantizer.snap(e.getValue()), index.vectorOf(e.getKey()), e.getKey());
    }
    assertEquals(expected.size(), index.ids().size());
  }

  @Test
  void aDeletedTargetLeavesTheTree() {
    SplittableRandom random = new SplittableRandom(6);
    ShardIndex index = ShardIndex.empty(D, 1.3);
    List<String> ids = new ArrayList<>();
    List<float[]> vectors = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      ids.add("t" + i);
      vectors.add(random(random));
    }
    for (int i = 0; i < ids.size(); i++) {
      index.upsert(ids.get(i), vectors.get(i));
    }
    assertEquals(ids.size(), index.size());
    index.delete("t7");
    assertFalse(index.contains("t7"));
    assertEquals(ids.size() - 1, index.size());
    assertEquals(List.of(), index.checkInvariants());
  }

  /** A random rotation scaled by factors in [1, condition]: a map of that condition number. */
  static CacheMap rotationScaledUpTo(double condition, SplittableRandom random) {
    double[][] q = new double[D][D];
    for (int i = 0; i < D; i++) { // Gram-Schmidt over Gaussian rows: a random orthogonal matrix
      for (int j = 0; j < D; j++) {
        q[i][j] = random.nextGaussian();
      }
      for (int k = 0; k < i; k++) {
        double dot = 0;
        for (int j = 0; j < D; j++) {
          dot += q[i][j] * q[k][j];
        }
        for (int j = 0; j < D; j++) {
          q[i][j] -= dot * q[k][j];
        }
      }
      double norm = 0;
      for (int j = 0; j < D; j++) {
        norm += q[i][j] * q[i][j];
      }
      for (int j = 0; j < D; j++) {
        q[i][j] /= Math.sqrt(norm);
      }
    }
    float[] m = new float[D * D];
    for (int i = 0; i < D; i++) {
      double scale = 1 + (condition - 1) * i / (D - 1.0);
      for (int j = 0; j < D; j++) {
        m[i * D + j] = (float) (scale * q[i][j]);
      }
    }
    return new CacheMap(D, m);
  }

  private static float[] applied(CacheMap map, float[] v) {
    float[] out = v.clone();
    map.applyInPlace(out, new float[D]);
    return out;
  }

  /**
   * {@code actual} is {@code expected} as the index holds it: within 5 % of its largest coordinate.
   * The tree keeps 8 bits per coordinate (an error up to 1/127 of the largest), and a map applied
   * to the tree's vectors carries the error of the vectors it moved; a missing or doubled map is
   * off by the map's whole effect.
   */
  private static void assertClose(float[] expected, float[] actual, String what) {
    double largest = 0;
    for (float x : expected) {
      largest = Math.max(largest, Math.abs(x));
    }
    for (int j = 0; j < expected.length; j++) {
      assertEquals(expected[j], actual[j], 0.05 * largest, what + "[" + j + "]");
    }
  }

  /**
   * Two maps of condition 1.5 each, then a target upserted and one deleted: no vector in the tree
   * moved, yet every target reads back at its current vector (as the index holds it), and exact
   * sampling through the index draws from the softmax over the current vectors (not over the
   * tree's).
   */
  @Test
  void wellConditionedMapsMoveOnlyTheFrameAndSamplingStaysExact() {
    SplittableRandom random = new SplittableRandom(7);
    ShardIndex index = ShardIndex.empty(D, 1.3);
    Map<String, float[]> current = new HashMap<>();
    for (int i = 0; i < 200; i++) {
      float[] v = random(random);
      double norm = VectorMath.norm(v);
      for (int j = 0; j < D; j++) {
        v[j] /= (float) norm;
      }
      index.upsert("t" + i, v);
      current.put("t" + i, v);
    }
    for (int update = 0; update < 2; update++) {
      CacheMap map = rotationScaledUpTo(1.5, random);
      ShardIndex.Moved moved = index.move(map, 1);
      assertTrue(moved.byFrame(), "distortion " + moved.distortion());
      current.replaceAll((id, v) -> applied(map, v));
    }
    assertFalse(index.frame().isIdentity());
    float[] added = random(random);
    index.upsert("new", added);
    current.put("new", added);
    index.delete("t3");
    current.remove("t3");
    for (Map.Entry<String, float[]> e : current.entrySet()) {
      assertClose(e.getValue(), index.vectorOf(e.getKey()), e.getKey());
    }
    assertNull(index.vectorOf("t3"));

    float[] query = random(random);
    double beta = 4;
    List<String> ids = index.ids();
    double[] p = new double[ids.size()];
    double sum = 0;
    for (int i = 0; i < p.length; i++) {
      p[i] = Math.exp(beta * VectorMath.dot(query, index.vectorOf(ids.get(i))));
      sum += p[i];
    }
    Map<String, Integer> position = new HashMap<>();
    for (int i = 0; i < p.length; i++) {
      p[i] /= sum;
      position.put(ids.get(i), i);
    }
    RejectionSampler exact =
        new RejectionSampler(new FindClustering.Options(beta, 2, 0.0, 100_000), 1_000_000);
    int draws = 40_000;
    Samples samples = index.sample(exact, query, draws, new SplittableRandom(8));
    double[] empirical = new double[p.length];
    for (int i = 0; i < samples.size(); i++) {
      String id = index.idOf(samples.targets()[i]);
      assertEquals(
          beta * VectorMath.dot(query, index.vectorOf(id)), samples.logits()[i], 1e-4, "logit");
      empirical[position.get(id)] += 1.0 / draws;
    }
    double tv = 0;
    for (int i = 0; i < p.length; i++) {
      tv += Math.abs(p[i] - empirical[i]) / 2;
    }
    // Sampling noise alone is about 0.03 here; scores against the tree's own vectors give ~0.3.
    assertTrue(tv < 0.06, "total variation " + tv);
  }

  /** A map past the frame's distortion bound moves every vector and repairs the tree instead. */
  @Test
  void anIllConditionedFrameIsAppliedToTheVectors() {
    SplittableRandom random = new SplittableRandom(9);
    ShardIndex index = ShardIndex.empty(D, 1.3);
    Map<String, float[]> current = new HashMap<>();
    for (int i = 0; i < 1_000; i++) {
      float[] v = random(random);
      index.upsert("t" + i, v);
      current.put("t" + i, Int8Quantizer.snap(v)); // as the tree holds it
    }
    CacheMap gentle = rotationScaledUpTo(1.5, random);
    assertTrue(index.move(gentle, 1).byFrame());
    current.replaceAll((id, v) -> applied(gentle, v));
    // One direction stretched 12 times: edges along it stretch ~9 times, edges across it not at
    // all.
    float[] m = new float[D * D];
    for (int i = 0; i < D; i++) {
      m[i * D + i] = i == 0 ? 12 : 1;
    }
    CacheMap stretching = new CacheMap(D, m);
    ShardIndex.Moved moved = index.move(stretching, 2);
    // Moved by both maps and snapped again.
    current.replaceAll((id, v) -> Int8Quantizer.snap(applied(stretching, v)));

    assertFalse(moved.byFrame());
    assertNotNull(moved.repair());
    assertTrue(moved.distortion() > TreeFrame.MAX_DISTORTION, "distortion " + moved.distortion());
    assertTrue(index.frame().isIdentity());
    assertEquals(List.of(), index.checkInvariants());
    for (Map.Entry<String, float[]> e : current.entrySet()) {
      // The index composed the two maps into one: its floats differ in the last bits, which may
      // round a coordinate to the next code (one step, 1/63.5 of the largest coordinate at most).
      float[] expected = e.getValue();
      float[] actual = index.vectorOf(e.getKey());
      double step = 0;
      for (float x : expected) {
        step = Math.max(step, Math.abs(x) / 63.5);
      }
      for (int j = 0; j < D; j++) {
        assertEquals(expected[j], actual[j], step + 1e-4, e.getKey() + "[" + j + "]");
      }
    }
  }

  /** An index of targets t0 .. t(n-1) at random vectors. */
  private static ShardIndex randomTargets(int n, SplittableRandom random) {
    ShardIndex index = ShardIndex.empty(D, 1.3);
    for (int i = 0; i < n; i++) {
      index.upsert("t" + i, random(random));
    }
    return index;
  }

  /**
   * {@code n} targets that leave the last direction unused, moved by a map that permutes and scales
   * the used directions and loses the last (as maps between Nyström caches do): the map keeps the
   * frame, and a vector with a component along the last direction is beyond its reach. {@code
   * current} receives every target's current vector.
   */
  private static ShardIndex movedByALosingMap(
      int n, SplittableRandom random, Map<String, float[]> current) {
    ShardIndex index = ShardIndex.empty(D, 1.3);
    for (int i = 0; i < n; i++) {
      float[] v = random(random);
      v[D - 1] = 0;
      index.upsert("t" + i, v);
      current.put("t" + i, v);
    }
    float[] m = new float[D * D];
    for (int i = 0; i < D - 1; i++) {
      m[i * D + ((i + 1) % (D - 1))] = 1.2f;
    }
    CacheMap losing = new CacheMap(D, m);
    assertTrue(index.move(losing, 1).byFrame());
    current.replaceAll((id, v) -> applied(losing, v));
    return index;
  }

  /**
   * A map that loses a direction no target uses (as maps between Nyström caches do) keeps the
   * frame; a new target with a component along it is out of the frame's reach, so the index moves
   * its vectors first, and every target still reads back at its current vector.
   */
  @Test
  void aTargetOutsideTheFramesReachFlattensTheFrame() {
    SplittableRandom random = new SplittableRandom(11);
    Map<String, float[]> current = new HashMap<>();
    ShardIndex index = movedByALosingMap(500, random, current);

    float[] reached = random(random);
    reached[D - 1] = 0;
    index.upsert("reached", reached);
    current.put("reached", reached);
    assertFalse(index.frame().isIdentity());

    float[] beyond = random(random);
    beyond[D - 1] = 1;
    index.upsert("beyond", beyond);
    current.put("beyond", beyond);
    assertTrue(index.frame().isIdentity());
    assertEquals(List.of(), index.checkInvariants());
    for (Map.Entry<String, float[]> e : current.entrySet()) {
      assertClose(e.getValue(), index.vectorOf(e.getKey()), e.getKey());
    }
  }

  /**
   * A gradual exact pass's view: staged vectors leave the tree as it was (the index still reads the
   * old vectors back, and a second staging costs no frame flattening even beyond the frame's
   * reach), and the rebuilt index holds every target at its staged vector, or at the one it had.
   */
  @Test
  void stagedVectorsReachTheTreeOnlyWhenItIsRebuilt() {
    SplittableRandom random = new SplittableRandom(12);
    Map<String, float[]> before = new HashMap<>();
    ShardIndex index = movedByALosingMap(600, random, before);
    Map<String, float[]> exact = new HashMap<>();
    for (int i = 0; i < 600; i += 2) {
      float[] v = random(random); // beyond the frame's reach: upserting it would flatten the frame
      index.stage("t" + i, v);
      exact.put("t" + i, v);
    }
    assertEquals(300, index.stagedCount());
    assertEquals(0, index.framesFlattened());
    for (Map.Entry<String, float[]> e : before.entrySet()) {
      assertClose(e.getValue(), index.vectorOf(e.getKey()), "served " + e.getKey());
    }

    ShardIndex rebuilt = index.rebuilt(3);
    assertEquals(List.of(), rebuilt.checkInvariants());
    assertEquals(600, rebuilt.size());
    assertEquals(0, rebuilt.stagedCount());
    for (Map.Entry<String, float[]> e : before.entrySet()) {
      float[] expected = exact.getOrDefault(e.getKey(), e.getValue());
      assertClose(expected, rebuilt.vectorOf(e.getKey()), "rebuilt " + e.getKey());
    }
  }

  /**
   * What happens to a target after it was staged wins: an upsert's vector, a delete, or a map that
   * moves the staged vector along with every other.
   */
  @Test
  void aStagedVectorYieldsToLaterUpsertsDeletesAndMaps() {
    SplittableRandom random = new SplittableRandom(13);
    ShardIndex index = randomTargets(200, random);
    float[] staged = random(random);
    float[] upserted = random(random);
    index.stage("t1", random(random));
    index.upsert("t1", upserted);
    index.stage("t2", random(random));
    index.delete("t2");
    index.stage("t3", staged);
    assertEquals(1, index.stagedCount());
    CacheMap map = rotationScaledUpTo(1.5, random);
    index.move(map, 1);

    ShardIndex rebuilt = index.rebuilt(3);
    assertEquals(199, rebuilt.size());
    assertFalse(rebuilt.contains("t2"));
    assertClose(applied(map, upserted), rebuilt.vectorOf("t1"), "t1");
    assertClose(applied(map, staged), rebuilt.vectorOf("t3"), "t3");
    assertThrows(IllegalArgumentException.class, () -> index.stage("t2", staged));
  }

  /**
   * A restore's view of an index: the state lists the live targets in its own order, at their
   * current vectors (the frame applied), a few gone since the shape was written (whose subtrees are
   * inserted again) and a few new.
   */
  @Test
  void anIndexRestoredFromItsShapeHoldsTheStatesTargetsAtTheirVectors() {
    SplittableRandom random = new SplittableRandom(9);
    ShardIndex index = randomTargets(3_000, random);
    for (int i = 0; i < 3_000; i += 7) {
      index.delete("t" + i);
    }
    assertTrue(index.move(rotationScaledUpTo(1.5, random), 1).byFrame());
    List<String> live = index.ids();
    java.util.Set<String> gone = new java.util.HashSet<>();
    for (int i = 0; i < live.size(); i += 50) {
      gone.add(live.get(i));
    }
    byte[] shape = index.shape(gone::contains);
    List<String> ids = new ArrayList<>();
    List<float[]> vectors = new ArrayList<>();
    for (int i = live.size() - 1; i >= 0; i--) {
      if (!gone.contains(live.get(i))) {
        ids.add(live.get(i));
        vectors.add(index.vectorOf(live.get(i)));
      }
    }
    for (int i = 0; i < 30; i++) {
      ids.add("new" + i);
      vectors.add(random(random));
    }

    ShardIndex.Restored restored = ShardIndex.restore(D, 1.3, ids, vectors, 5, shape);

    ShardIndex back = restored.index();
    assertEquals(List.of(), back.checkInvariants());
    assertEquals(ids.size(), back.size());
    for (int i = 0; i < ids.size(); i++) {
      assertArrayEquals(Int8Quantizer.snap(vectors.get(i)), back.vectorOf(ids.get(i)), ids.get(i));
    }
    assertFalse(back.contains(live.get(0))); // gone
    assertTrue(restored.placed() > 0.9 * ids.size(), "placed " + restored.placed());
    assertTrue(restored.inserted() >= 30, "inserted " + restored.inserted());
  }

  @Test
  void aTruncatedShapeIsRejected() {
    SplittableRandom random = new SplittableRandom(3);
    ShardIndex index = randomTargets(100, random);
    byte[] shape = index.shape(id -> false);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                ShardIndex.restore(
                    D,
                    1.3,
                    List.of("t1"),
                    List.of(random(random)),
                    5,
                    java.util.Arrays.copyOf(shape, 40)));
    assertTrue(e.getMessage().contains("malformed"), e.getMessage());
    // A slot count beyond what the bytes can hold: rejected, not allocated.
    byte[] huge = {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x07};
    IllegalArgumentException slots =
        org.junit.jupiter.api.Assertions.assertThrows(
            IllegalArgumentException.class,
            () -> ShardIndex.restore(D, 1.3, List.of("t1"), List.of(random(random)), 5, huge));
    assertTrue(slots.getMessage().contains("slots in"), slots.getMessage());
  }
}
