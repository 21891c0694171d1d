package io.dynnibal.bench.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CpuTotalsTest {

  @Test
  void aThreadCountsWhatItUsedSinceItsLastSampleOnce() {
    CpuTotals<Integer> totals = new CpuTotals<>(List.of("idle"));
    totals.record(1, "shards", 100);
    totals.record(2, "shards", 50);
    totals.record(1, "shards", 130);
    assertEquals(Map.of("shards", 180L, "idle", 0L), totals.snapshot());
  }

  /** Thread 1 ended at 130 and a new thread took its id: its 20 count from zero. */
  @Test
  void aReusedIdCountsItsNewThreadFromZero() {
    CpuTotals<Integer> totals = new CpuTotals<>(List.of());
    totals.record(1, "jit", 130);
    totals.record(1, "jit", 20);
    assertEquals(Map.of("jit", 150L), totals.snapshot());
  }
}
