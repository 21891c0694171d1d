package io.dynnibal.sampler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.FeatureConfig;
import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.state.TargetFeatures;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TrainerNegativeCacheTest {
  private static final DualEncoderConfig SMALL =
      new DualEncoderConfig(new FeatureConfig(1 << 10, 16, 4, 3, 4), 8, 16, 8, true, 20f);
  private static final int PER_EXAMPLE = 2;

  @Test
  void eachNegativeCarriesTheChanceThatTheQuerysDrawsIncludedIt() {
    eachNegativeCarriesTheChanceOfItsDraws(1, "t0");
  }

  /**
   * With a sharpness, the chance under the sharper softmax the draws came from (the positive is not
   * the query's best match: a sharper softmax puts nearly all its mass there).
   */
  @Test
  void aSharperSoftmaxIsTheOneItsChancesComeFrom() {
    eachNegativeCarriesTheChanceOfItsDraws(2, "t4");
  }

  private static void eachNegativeCarriesTheChanceOfItsDraws(double sharpness, String positive) {
    double beta = 20 * sharpness;
    String[] words = {"audio", "player", "kernel", "docs", "editor", "mail", "game", "shell"};
    try (DualEncoder encoder = DualEncoder.create(SMALL, 3)) {
      List<TargetFeatures> targets = new ArrayList<>();
      for (int i = 0; i < words.length; i++) {
        Features f = encoder.featurizeTarget(words[i] + " " + words[(i + 1) % words.length]);
        targets.add(new TargetFeatures("t" + i, f.ids(), f.weights(), null));
      }
      TrainerNegativeCache cache = new TrainerNegativeCache(16, context(sharpness));
      cache.addPositives(encoder, targets);
      List<Features> query = List.of(encoder.featurizeQuery("audio player"));
      TrainerNegatives.Drawn drawn = cache.draw(encoder, query, List.of(positive), 5);
      assertFalse(drawn.negatives().isEmpty());
      // Brute force: the query's softmax over the cached embeddings (as encoded when added;
      // nothing trained since).
      float[] q = encoder.encodeQueries(query)[0];
      float[][] t = encoder.encodeTargets(targets.stream().map(Features::of).toList());
      double z = 0;
      for (float[] target : t) {
        z += Math.exp(beta * dot(q, target));
      }
      for (TargetFeatures negative : drawn.negatives()) {
        assertNotEquals(positive, negative.id, "never the query's own positive");
        double p = Math.exp(beta * dot(q, t[Integer.parseInt(negative.id.substring(1))])) / z;
        assertEquals(
            1 - Math.pow(1 - p, PER_EXAMPLE),
            drawn.inclusions().of(negative.id),
            1e-4,
            negative.id);
      }
    }
  }

  private static double dot(float[] a, float[] b) {
    double s = 0;
    for (int i = 0; i < a.length; i++) {
      s += a[i] * b[i];
    }
    return s;
  }

  private static TrainerNegatives.Context context(double sharpness) {
    float scale = (float) NegativesMode.SAMPLE.softmaxScale(SMALL.scoreScale(), sharpness);
    return new TrainerNegatives.Context(SMALL.outputDim(), PER_EXAMPLE, scale, 7);
  }
}
