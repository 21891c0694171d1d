package io.dynnibal.negatives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import ai.djl.ndarray.NDManager;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class NegativeCacheTest {
  private static final int DIM = 16;

  @Test
  void evictsTheOldestBeyondCapacity() {
    NegativeCache<String> cache = new NegativeCache<>(3, DIM);
    for (int i = 0; i < 5; i++) {
      cache.add("t" + i, "p" + i, new float[DIM]);
    }
    assertEquals(
        List.of("t2", "t3", "t4"), cache.entries().stream().map(NegativeCache.Entry::id).toList());
    assertEquals(3L * DIM, cache.floats());
  }

  @Test
  void addingACachedIdReplacesItAndMakesItNewest() {
    NegativeCache<String> cache = new NegativeCache<>(3, DIM);
    cache.add("a", "old", new float[DIM]);
    cache.add("b", "b", new float[DIM]);
    float[] fresh = new float[DIM];
    fresh[0] = 1f;
    cache.add("a", "new", fresh);
    cache.add("c", "c", new float[DIM]);
    cache.add("d", "d", new float[DIM]); // evicts b, the oldest now
    List<NegativeCache.Entry<String>> entries = cache.entries();
    assertEquals(List.of("a", "c", "d"), entries.stream().map(NegativeCache.Entry::id).toList());
    assertEquals("new", entries.get(0).payload());
    assertEquals(1f, entries.get(0).embedding()[0]);
  }

  @Test
  void drawsFollowTheExactSoftmaxOverTheCache() {
    SplittableRandom random = new SplittableRandom(11);
    NegativeCache<Integer> cache = new NegativeCache<>(12, DIM);
    float[][] embeddings = FullDimensionPoolTest.randomVectors(random, 12);
    for (int i = 0; i < 12; i++) {
      cache.add("t" + i, i, normalise(embeddings[i]));
    }
    float[] query = normalise(FullDimensionPoolTest.randomVectors(random, 1)[0]);
    float scale = 3f;
    double[] exact = new double[12];
    double z = 0;
    for (int i = 0; i < 12; i++) {
      exact[i] =
          Math.exp(scale * FullDimensionPoolTest.dot(query, cache.entries().get(i).embedding()));
      z += exact[i];
    }
    int draws = 60_000;
    double[] seen = new double[12];
    try (NDManager manager = NDManager.newBaseManager(Device.cpu())) {
      for (NegativeCache.Draw<Integer> d :
          cache.sample(manager, new float[][] {query}, draws, scale, random).get(0)) {
        seen[d.entry().payload()]++;
        assertEquals(exact[d.entry().payload()] / z, d.probability(), 1e-5);
      }
    }
    double totalVariation = 0;
    for (int i = 0; i < 12; i++) {
      totalVariation += Math.abs(seen[i] / draws - exact[i] / z) / 2;
    }
    // Sampling noise alone: TV of 60k draws over 12 cells is about 0.01; a wrong scale or a top-k
    // would be far more.
    assertTrue(totalVariation < 0.015, "total variation to the exact softmax " + totalVariation);
  }

  @Test
  void anEmptyCacheDrawsNothing() {
    NegativeCache<String> cache = new NegativeCache<>(4, DIM);
    try (NDManager manager = NDManager.newBaseManager(Device.cpu())) {
      assertEquals(
          List.of(List.of(), List.of()),
          cache.sample(manager, new float[2][DIM], 3, 1f, new SplittableRandom(1)));
    }
  }

  private static float[] normalise(float[] v) {
    double n = Math.sqrt(FullDimensionPoolTest.dot(v, v));
    for (int i = 0; i < v.length; i++) {
      v[i] /= (float) n;
    }
    return v;
  }
}
