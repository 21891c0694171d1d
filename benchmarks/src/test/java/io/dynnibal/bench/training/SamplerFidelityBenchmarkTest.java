package io.dynnibal.bench.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.FeatureConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The benchmark on a small corpus: its references behave as references, every setting is measured.
 */
class SamplerFidelityBenchmarkTest {
  private static final String[] WORDS = {
    "audio", "video", "kernel", "python", "library", "driver", "font", "game", "editor", "network",
    "shell", "database", "compiler", "image", "crypto", "mail", "web", "server", "client", "docs"
  };

  @Test
  @SuppressWarnings("unchecked")
  void exactSamplingMeasuresAsFaithfulAndEverySettingIsReported() {
    SplittableRandom random = new SplittableRandom(3);
    List<TargetText> targets = new ArrayList<>();
    for (int i = 0; i < 600; i++) {
      targets.add(new TargetText("t" + i, text(random, 6) + " t" + i));
    }
    List<LabelledQuery> queries = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      int target = random.nextInt(targets.size());
      queries.add(new LabelledQuery("q" + i, targets.get(target).text(), "t" + target));
    }
    DualEncoderConfig config =
        new DualEncoderConfig(new FeatureConfig(1 << 12, 32, 8, 3, 4), 16, 32, 16, true, 20f);
    try (DualEncoder model = DualEncoder.create(config, 5)) {
      Map<String, Object> figures =
          SamplerFidelityBenchmark.run(
              new SamplerFidelityBenchmark.Options(
                  model,
                  targets,
                  queries,
                  60,
                  16,
                  1.3,
                  4,
                  List.of(2, 8),
                  List.of(10, 200),
                  List.of(0.3),
                  List.of(0, 16),
                  64,
                  1));
      assertEquals(60, figures.get("queries"));
      Map<String, Map<String, Object>> samplers =
          (Map<String, Map<String, Object>>) figures.get("samplers");
      assertEquals(2 + 8, samplers.size(), samplers.keySet().toString());
      // Exact draws at full dimension are what the figures divide by: 1 up to sampling noise.
      double exact = (Double) samplers.get("exact full dimension").get("mass_ratio");
      assertEquals(1.0, exact, 0.25, samplers.toString());
      for (Map<String, Object> f : samplers.values()) {
        double mass = (Double) f.get("mass_ratio");
        assertTrue(mass > 0 && mass < 2, samplers.toString());
      }
    }
  }

  private static String text(SplittableRandom random, int words) {
    StringBuilder s = new StringBuilder();
    for (int w = 0; w < words; w++) {
      s.append(WORDS[random.nextInt(WORDS.length)]).append(' ');
    }
    return s.toString().trim();
  }
}
