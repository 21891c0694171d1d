package io.dynnibal.bench.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.eval.RetrievalMetrics;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The results table: a row per run, the means and deviations only over several seeds. */
class ExperimentReportTest {

  @Test
  void aSingleSeedShowsARowPerSamplerWithoutDeviations() {
    String table =
        ExperimentReport.table(result(List.of(run("uniform", 1, 0.2), run("in-batch", 1, 0.3))));
    List<String> lines = List.of(table.split("\n"));
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("uniform s1 ")), table);
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("in-batch s1 ")), table);
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("bm25 (no training)")), table);
    assertFalse(table.contains("standard deviation") || table.contains("±"), table);
    assertEquals(4, lines.size(), table);
  }

  @Test
  void severalSeedsAddTheMeanAndTheDeviationOfEachSampler() {
    String table =
        ExperimentReport.table(result(List.of(run("uniform", 1, 0.2), run("uniform", 2, 0.4))));
    assertTrue(table.contains("mean over seeds\nuniform "), table);
    assertTrue(table.contains("standard deviation over seeds"), table);
    assertTrue(table.contains("0.300"), "the mean R@1: " + table);
  }

  private static Experiment.Result result(List<Experiment.Run> runs) {
    return new Experiment.Result(Map.of("name", "t"), Map.of(), runs, metrics(0.5));
  }

  private static Experiment.Run run(String sampler, long seed, double recall) {
    return new Experiment.Run(
        sampler,
        seed,
        1.5,
        metrics(recall),
        10,
        2.0,
        5.0,
        0,
        1,
        false,
        0,
        Double.NaN,
        Map.of(),
        List.of());
  }

  private static RetrievalMetrics metrics(double recall) {
    Map<Integer, Double> at = new LinkedHashMap<>();
    for (int k : RetrievalMetrics.RECALL_AT) {
      at.put(k, recall);
    }
    Map<Integer, Double> mrr = new LinkedHashMap<>();
    for (int k : RetrievalMetrics.MRR_AT) {
      mrr.put(k, recall / 2);
    }
    return new RetrievalMetrics(10, 0, 100, at, mrr, 0.1);
  }
}
