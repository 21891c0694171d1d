package io.dynnibal.model.transformer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.nn.Parameter;
import ai.djl.training.GradientCollector;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.Tower;
import io.dynnibal.model.features.Features;
import io.dynnibal.training.SampledSoftmaxLoss;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The fast path of a transformer with frozen bottom layers (the frozen-prefix cache, length groups)
 * trains the same model as the full path: the same loss and the same gradients on every trainable
 * parameter, for the same frozen weights and batch.
 */
class FrozenPrefixPathTest {
  private static final List<String> QUERIES =
      List.of("a strategy game", "perl timers", "the c library", "a text editor for vi users");
  private static final List<String> TARGETS =
      List.of(
          "0ad: real-time strategy game of ancient warfare",
          "libmoosex-role-timer-perl: measure time spent in methods of Moose roles",
          "libc6: GNU C Library, shared libraries",
          "vim: Vi IMproved, enhanced vi editor",
          "nano: small, friendly text editor inspired by Pico",
          "emacs");

  private static DualEncoderConfig minilm(int trainableLayers, FastPath path) {
    return DualEncoderConfig.transformer(
            BertCheckpoint.MINILM, 0, 24, 12, trainableLayers, true, 20f)
        .withFastPath(path);
  }

  @Test
  void singlePrecisionCacheAndLengthGroupsGiveTheFullPathsLossAndGradients() {
    Gradients full = gradients(minilm(2, FastPath.OFF), 2);
    Gradients fast = gradients(minilm(2, new FastPath(64, false, 3)), 2);
    assertEquals(full.loss, fast.loss, 1e-5 * Math.abs(full.loss));
    assertClose(full, fast, 1e-4);
    // The second pass read every text from the cache and still agrees.
    assertTrue(fast.hits > 0);
  }

  @Test
  void halfPrecisionCacheStaysWithinItsRounding() {
    Gradients full = gradients(minilm(1, FastPath.OFF), 2);
    Gradients fast = gradients(minilm(1, new FastPath(64, true, 1)), 2);
    assertEquals(full.loss, fast.loss, 2e-3 * Math.abs(full.loss));
    assertClose(full, fast, 2e-2);
  }

  @Test
  void theCacheIsKeyedByEveryTokenAndByTheFrozenWeights() {
    try (DualEncoder encoder = DualEncoder.create(minilm(1, new FastPath(64, true, 1)), 3)) {
      Tower tower = encoder.targetTower();
      Features text = encoder.featurizeTarget("vim: Vi IMproved");
      tower.encode(List.of(text));
      FrozenPrefixCache cache = tower.frozenPrefixCache();
      assertNotNull(cache.get(text.ids()));
      int[] changed = text.ids().clone();
      changed[2]++;
      assertNull(cache.get(changed), "a text differing in one token is not held");
      assertNull(cache.get(java.util.Arrays.copyOf(text.ids(), text.size() - 1)));
      // Another frozen part (here: another number of frozen layers) finds another cache.
      try (DualEncoder other = DualEncoder.create(minilm(2, new FastPath(64, true, 1)), 3)) {
        assertTrue(other.targetTower().frozenPrefixCache() != cache);
        assertNull(other.targetTower().frozenPrefixCache().get(text.ids()));
      }
      // Changed frozen weights (a word embedding) name another cache once the tower is told.
      tower.table().values()[text.ids()[1] * tower.table().dim()] += 0.5f;
      tower.markTrainable();
      assertTrue(tower.frozenPrefixCache() != cache);
    }
  }

  @Test
  void encodingThroughTheCacheMatchesEncodingWithout() {
    try (DualEncoder plain = DualEncoder.create(minilm(1, FastPath.OFF), 4);
        DualEncoder cached = DualEncoder.create(minilm(1, new FastPath(64, false, 1)), 4)) {
      List<Features> texts = plain.featurizeTargets(TARGETS);
      float[][] expected = plain.encodeTargets(texts);
      cached.encodeTargets(texts); // fills the cache
      float[][] again = cached.encodeTargets(texts);
      for (int i = 0; i < texts.size(); i++) {
        assertArrayEquals(expected[i], again[i], 1e-5f);
      }
    }
  }

  private static void assertClose(Gradients expected, Gradients actual, double relative) {
    assertEquals(expected.values.size(), actual.values.size());
    double total = 0;
    for (float[] e : expected.values) {
      for (float v : e) {
        total += v * (double) v;
      }
    }
    // A parameter whose true gradient is zero (the attention key's bias: a softmax ignores a shift
    // shared by its inputs) is compared against the whole gradient's norm instead.
    double floor = 1e-6 * Math.sqrt(total);
    for (int p = 0; p < expected.values.size(); p++) {
      float[] e = expected.values.get(p);
      float[] a = actual.values.get(p);
      double diff = 0;
      double norm = 0;
      for (int i = 0; i < e.length; i++) {
        diff += (e[i] - a[i]) * (double) (e[i] - a[i]);
        norm += e[i] * (double) e[i];
      }
      assertTrue(
          Math.sqrt(diff) <= relative * Math.sqrt(norm) + floor,
          "parameter " + p + ": |diff| " + Math.sqrt(diff) + " against |grad| " + Math.sqrt(norm));
    }
  }

  /** The loss and trainable gradients of the last of {@code passes} passes over one batch. */
  private static Gradients gradients(DualEncoderConfig config, int passes) {
    try (DualEncoder encoder = DualEncoder.create(config, 5)) {
      List<Features> queries = QUERIES.stream().map(encoder::featurizeQuery).toList();
      List<Features> targets = encoder.featurizeTargets(TARGETS);
      List<String> ids = List.of("0ad", "moosex", "libc6", "vim");
      float[] mask = SampledSoftmaxLoss.mask(ids, List.of("nano", "emacs"));
      Tower tower = encoder.targetTower();
      float loss = 0;
      List<float[]> values = new ArrayList<>();
      for (int pass = 0; pass < passes; pass++) {
        values.clear();
        try (NDManager scope = encoder.manager().newSubManager();
            GradientCollector collector = encoder.manager().getEngine().newGradientCollector()) {
          NDArray q = tower.forwardForTraining(queries, scope).output();
          NDArray t = tower.forwardForTraining(targets, scope).output();
          NDArray l = SampledSoftmaxLoss.loss(q, t, mask, 20f, scope);
          loss = l.getFloat();
          collector.backward(l);
          for (Parameter p : tower.trainableParameters()) {
            values.add(p.getArray().getGradient().toFloatArray());
          }
        }
      }
      FrozenPrefixCache cache = tower.frozenPrefixCache();
      return new Gradients(loss, values, cache == null ? 0 : cache.hits());
    }
  }

  private record Gradients(float loss, List<float[]> values, long hits) {}
}
