package io.dynnibal.bench.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MiningBenchmarkTest {

  /**
   * Every method of a small shard reports its time and fidelity; the exact ones' normaliser is the
   * softmax's (the 8-bit cache within its rounding), and the smallest cluster budget's is lower. MH
   * at the job's budget one query at a time draws what it draws a batch at a time.
   */
  @Test
  @SuppressWarnings("unchecked")
  void theExactMinersKnowTheNormaliserAndTheCoarsestTreeUnderestimatesIt() {
    MiningBenchmark.Config config =
        new MiningBenchmark.Config(
            new int[] {3_000}, 16, 8, 2, 1, 7, 20, 1.3, 8, 64, 1024, 0.05, 4096, new int[] {8});
    Map<String, Object> out = MiningBenchmark.run(config, null);
    Map<String, Object> shard = ((List<Map<String, Object>>) out.get("shards")).get(0);
    Map<String, Map<String, Object>> methods =
        (Map<String, Map<String, Object>>) shard.get("methods");
    assertEquals(
        List.of("bruteforce", "blocked_float", "exact_cache", "mh_8", "mh_150", "mh_150_per_query"),
        List.copyOf(methods.keySet()));
    for (String exact : List.of("bruteforce", "blocked_float")) {
      assertEquals(0, (double) methods.get(exact).get("normaliser_error"), 1e-6, exact);
    }
    assertEquals(0, (double) methods.get("exact_cache").get("normaliser_error"), 0.01);
    assertTrue((double) methods.get("mh_8").get("normaliser_error") < -0.01, methods.toString());
    for (String figure : List.of("overlap_topk", "logit_ratio", "mass_ratio", "normaliser_error")) {
      assertEquals(
          methods.get("mh_150").get(figure), methods.get("mh_150_per_query").get(figure), figure);
    }
    for (Map<String, Object> m : methods.values()) {
      assertTrue((double) m.get("us_per_query") > 0);
      assertTrue((double) m.get("mass_ratio") > 0);
      assertTrue((double) m.get("kb_allocated_per_query") >= 0);
    }
  }
}
