package io.dynnibal.jobs.shard;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dynnibal.jobs.config.TrainingJobConfig;
import java.util.List;
import org.junit.jupiter.api.Test;

class ShardSettingsTest {

  private static ShardSettings settings(String... overrides) throws Exception {
    return ShardSettings.of(TrainingJobConfig.load(null, List.of(overrides)).validate());
  }

  /** A Debian shard gets the 1,600 clusters its fidelity was measured at, a larger shard more. */
  @Test
  void theClusterBudgetIsAShareOfTheShardUpToTheCap() throws Exception {
    ShardSettings defaults = settings();
    assertEquals(1_592, defaults.mhClusters(31_833));
    assertEquals(2_942, defaults.mhClusters(58_830));
    assertEquals(4_096, defaults.mhClusters(1_000_000));
    assertEquals(0, defaults.mhClusters(0));
    assertEquals(500, settings("mh.cluster.share=0.1", "mh.max.clusters=500").mhClusters(10_000));
    assertEquals(1_600, settings("mh.cluster.share=0", "mh.max.clusters=1600").mhClusters(10));
  }
}
