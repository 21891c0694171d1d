package io.dynnibal.jobs.shard;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.sampler.DynnibalMh;
import java.util.List;
import org.junit.jupiter.api.Test;

class ShardSettingsTest {

  /** The MH sampler the shards get from the settings. */
  private static DynnibalMh settings(String... overrides) throws Exception {
    List<String> all = new java.util.ArrayList<>(List.of("sampler=dynnibal-mh"));
    all.addAll(List.of(overrides));
    return (DynnibalMh) ShardSettings.of(TrainingJobConfig.load(null, all).validate()).sampler();
  }

  /** The settings reach the shard's sampler: its cluster budget is a share of the shard, capped. */
  @Test
  void theClusterBudgetIsAShareOfTheShardUpToTheCap() throws Exception {
    DynnibalMh defaults = settings();
    assertEquals(1_592, defaults.clusters(31_833));
    assertEquals(2_942, defaults.clusters(58_830));
    assertEquals(4_096, defaults.clusters(1_000_000));
    assertEquals(0, defaults.clusters(0));
    assertEquals(500, settings("mh.cluster.share=0.1", "mh.max.clusters=500").clusters(10_000));
    assertEquals(1_600, settings("mh.cluster.share=0", "mh.max.clusters=1600").clusters(10));
  }
}
