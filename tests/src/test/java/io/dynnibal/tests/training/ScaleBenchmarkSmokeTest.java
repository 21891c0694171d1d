package io.dynnibal.tests.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.bench.scale.ScaleBenchmark;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.tests.harness.WorkDirs;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code ./dynnibal bench scale}'s code path with a smoke config: synthetic targets indexed by the
 * real job, training, a cancel and a restore from the retained checkpoint, and every figure read.
 */
class ScaleBenchmarkSmokeTest {
  @Test
  @Timeout(300)
  void indexesTrainsAndRestoresAndReportsEveryFigure() throws Exception {
    TrainingJobConfig config = SmokeRuns.config("scale-smoke");
    Path work = WorkDirs.fresh("scale-smoke");
    ByteArrayOutputStream console = new ByteArrayOutputStream();
    Map<String, Object> figures;
    try (PrintStream out = new PrintStream(console, true, StandardCharsets.UTF_8)) {
      figures = ScaleBenchmark.run(new ScaleBenchmark.Options(3_000, config, 3, 6, work, 7), out);
    }
    String context = figures + "\n" + console.toString(StandardCharsets.UTF_8);
    assertEquals(3_000, ((Number) figures.get("targets")).intValue(), context);
    assertEquals(6L, ((Number) figures.get("steps_timed")).longValue(), context);
    for (String positive :
        new String[] {
          "index_targets_per_s",
          "steps_per_s",
          "state_bytes_per_target",
          "checkpoint_bytes",
          "restore_seconds",
          "tree_rebuild_seconds"
        }) {
      assertTrue(((Number) figures.get(positive)).doubleValue() > 0, positive + ": " + context);
    }
    // The checkpoint holds the keyed state and the trainer's parameters besides.
    assertTrue(
        ((Number) figures.get("checkpoint_bytes")).longValue()
            > ((Number) figures.get("state_bytes")).longValue(),
        context);
    assertTrue(figures.containsKey("heap_bytes_per_target"), context);
    assertTrue(!((String) figures.get("collector")).isBlank(), context);
    // Every restored shard's tree came back from the shape saved with the checkpoint.
    assertEquals(
        Math.min(config.job.parallelism, config.job.shards),
        ((Number) figures.get("trees_from_shape")).intValue(),
        context);
  }
}
