package io.dynnibal.jobs.shard;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.features.Features;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Shard subtasks of one JVM share a model version's encoder, and release it together. (Seeds no
 * other test uses: the registry is the JVM's.)
 */
class SharedEncodersTest {

  @Test
  void subtasksAtOneVersionShareOneEncoderUntilTheLastLetsGo() {
    int before = SharedEncoders.loaded();
    ShardModel first = ShardModel.initial(settings(7_000_001));
    ShardModel second = ShardModel.initial(settings(7_000_001));
    ShardModel other = ShardModel.initial(settings(7_000_002));
    assertSame(first.encoder, second.encoder, "one version, one encoder");
    assertNotSame(first.encoder, other.encoder, "another seed is another model");
    assertEquals(before + 2, SharedEncoders.loaded());

    List<Features> texts = texts(first.encoder, 5);
    float[][] encoded = first.encoder.encodeTargets(texts);
    first.close();
    first.close(); // a second close lets go of nothing more
    assertEquals(before + 2, SharedEncoders.loaded(), "the second subtask still holds it");
    assertArrayEquals(encoded, second.encoder.encodeTargets(texts), "and it still encodes");
    second.close();
    other.close();
    assertEquals(before, SharedEncoders.loaded(), "the last release closed it");
  }

  /** Two subtasks' threads encode with one encoder at once: each gets what it would alone. */
  @Test
  void anEncoderEncodesFromSeveralThreadsAsFromOne() throws Exception {
    try (ShardModel model = ShardModel.initial(settings(7_000_003))) {
      List<List<Features>> batches = new ArrayList<>();
      List<float[][]> alone = new ArrayList<>();
      for (int b = 0; b < 8; b++) {
        List<Features> batch = texts(model.encoder, 40 + b);
        batches.add(batch);
        alone.add(model.encoder.encodeTargets(batch));
      }
      ExecutorService threads = Executors.newFixedThreadPool(2);
      try {
        List<Future<float[][]>> together = new ArrayList<>();
        for (int round = 0; round < 10; round++) {
          for (List<Features> batch : batches) {
            together.add(threads.submit(() -> model.encoder.encodeTargets(batch)));
          }
        }
        for (int i = 0; i < together.size(); i++) {
          assertArrayEquals(alone.get(i % batches.size()), together.get(i).get(), "batch " + i);
        }
      } finally {
        threads.shutdownNow();
      }
    }
  }

  private static List<Features> texts(DualEncoder encoder, int n) {
    List<Features> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(encoder.featurizeTarget("package-" + i + " a library for " + (i * 7) + " things"));
    }
    return out;
  }

  private static ShardSettings settings(long seed) {
    return ShardSettings.of(
        new TrainingJobConfig()
            .apply("seed", Long.toString(seed))
            .apply("model.buckets", "4096")
            .apply("model.embedding.dim", "16")
            .apply("model.hidden.dim", "32")
            .apply("model.output.dim", "16")
            .apply("landmarks", "8")
            .apply("regression.samples", "16")
            .validate());
  }
}
