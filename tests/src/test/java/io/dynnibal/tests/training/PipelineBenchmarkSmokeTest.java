package io.dynnibal.tests.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.bench.pipeline.PipelineBenchmark;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.local.Corpus;
import io.dynnibal.tests.harness.WorkDirs;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code ./dynnibal bench pipeline}'s code path with a smoke config: the full job and the trainer
 * alone on a small synthetic corpus, and the figures it reports about both.
 */
class PipelineBenchmarkSmokeTest {
  @Test
  @Timeout(240)
  void measuresTheJobAndTheTrainerAloneOnTheSameDose() throws Exception {
    SyntheticCorpus synthetic = new SyntheticCorpus(120, 240, 8, 4, 7);
    Corpus corpus = new Corpus("synthetic", synthetic.targets, synthetic.train, synthetic.eval);
    TrainingJobConfig config = SmokeRuns.config("pipeline-smoke", "negatives.per.example=2");
    Path work = WorkDirs.fresh("pipeline-smoke");
    ByteArrayOutputStream console = new ByteArrayOutputStream();
    Map<String, Object> figures;
    try (PrintStream out = new PrintStream(console, true, StandardCharsets.UTF_8)) {
      figures =
          PipelineBenchmark.run(
              new PipelineBenchmark.Options(corpus, config, 10, 30, work, 7), out);
    }
    String printed = console.toString(StandardCharsets.UTF_8);
    assertEquals(30L, ((Number) figures.get("steps_timed")).longValue(), printed);
    double trainer = ((Number) figures.get("trainer_steps_per_s")).doubleValue();
    double pipeline = ((Number) figures.get("pipeline_steps_per_s")).doubleValue();
    assertTrue(trainer > 0 && pipeline > 0, figures.toString());
    assertEquals(
        Math.round(pipeline / trainer * 1000) / 1000.0,
        ((Number) figures.get("ratio")).doubleValue(),
        0.002,
        figures.toString());
    double idle = ((Number) figures.get("trainer_idle_fraction")).doubleValue();
    assertTrue(idle >= 0 && idle < 1, figures.toString());
    // Each step trains against the uniform draws at least, and hard ones after the warm-up.
    double negatives = ((Number) figures.get("negatives_per_step")).doubleValue();
    assertTrue(negatives >= 8 && negatives <= 8 + 16 * 2, figures.toString());
    assertTrue(((Number) figures.get("shard_ms_per_batch")).doubleValue() > 0, figures.toString());
    assertTrue(((Number) figures.get("merge_ms_per_batch")).doubleValue() > 0, figures.toString());
    // How the cores were shared: each operator's CPU per step, adding up to the total.
    @SuppressWarnings("unchecked")
    Map<String, Double> cpu = (Map<String, Double>) figures.get("cpu_ms_per_step");
    assertTrue(cpu.get("shards") > 0 && cpu.get("trainer") > 0, figures.toString());
    assertEquals(
        cpu.get("shards") + cpu.get("trainer") + cpu.get("merge") + cpu.get("other"),
        cpu.get("total"),
        0.01,
        figures.toString());
    assertTrue(
        ((Number) figures.get("trainer_alone_cpu_ms_per_step")).doubleValue() > 0,
        figures.toString());
    assertFalse(((String) figures.get("collector")).isBlank(), figures.toString());
    // A smoke run's few steps run while the JIT is still compiling the job's code.
    assertTrue(((Number) figures.get("jit_ms_per_step")).doubleValue() > 0, figures.toString());
  }
}
