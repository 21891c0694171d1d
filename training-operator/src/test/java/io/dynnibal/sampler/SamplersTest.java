package io.dynnibal.sampler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.negatives.NegativesMode;
import java.util.List;
import org.junit.jupiter.api.Test;

class SamplersTest {

  /** Names the building block a sampler picks, with its parameters. */
  private static final ShardMiners<String> NAMED =
      new ShardMiners<>() {
        @Override
        public String none() {
          return "none";
        }

        @Override
        public String pool(double fraction, int refreshEvery) {
          return "pool " + fraction + " " + refreshEvery;
        }

        @Override
        public String metropolisHastings(DynnibalMh sampler) {
          return "mh " + sampler.chainLength();
        }

        @Override
        public String rejection(DynnibalRejection sampler) {
          return "rejection " + sampler.gamma();
        }

        @Override
        public String exactCache() {
          return "exact cache";
        }

        @Override
        public String auto(Auto sampler) {
          return "auto " + sampler.exactMaxTargets() + " else " + metropolisHastings(sampler.mh());
        }

        @Override
        public String lexical() {
          return "lexical";
        }
      };

  @Test
  void everySamplerButInBatchGetsTheSameDosePerExample() {
    int perExample = 2;
    int batch = 16;
    int uniform = 32;
    for (String id : Samplers.NAMES) {
      Sampler s = Samplers.of(id);
      int total = s.uniformDraws(uniform, perExample, batch) + s.hardNegatives(perExample, batch);
      assertEquals(id.equals(InBatch.ID) ? 0 : 32 + 2 * 16, total, id);
    }
    assertEquals(32, Samplers.of(DynnibalMh.ID).hardNegatives(perExample, batch));
    assertEquals(32, Samplers.of(Exhaustive.ID).hardNegatives(perExample, batch));
    assertEquals(32, Samplers.of(StochasticNegativeMining.ID).hardNegatives(perExample, batch));
  }

  @Test
  void namesRoundTripAndAnUnknownNameIsAnError() {
    for (String id : Samplers.NAMES) {
      assertEquals(id, Samplers.of(id).id());
    }
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Samplers.of("top-1"));
    assertTrue(e.getMessage().contains(Samplers.NAMES.toString()), e.getMessage());
    SamplerSettings settings = new SamplerSettings();
    settings.name = "top-1";
    assertNotNull(settings.problem());
    settings.name = Uniform.ID;
    assertNull(settings.problem());
  }

  @Test
  void eachSamplerPicksItsShardBuildingBlockWithItsSettings() {
    SamplerSettings s = new SamplerSettings();
    s.snm.snmPoolFraction = 0.25;
    s.snm.snmRefreshEvery = 7;
    s.mh.mhChainLength = 3;
    s.rejection.rejectionGamma = 50;
    s.auto.autoExactMaxTargets = 5_000;
    assertEquals("none", Samplers.of(InBatch.ID, s).shardMiner(NAMED));
    assertEquals("none", Samplers.of(Uniform.ID, s).shardMiner(NAMED));
    assertEquals("none", Samplers.of(NegativeCacheSampler.ID, s).shardMiner(NAMED));
    assertEquals("pool 0.25 7", Samplers.of(StochasticNegativeMining.ID, s).shardMiner(NAMED));
    assertEquals("pool 1.0 0", Samplers.of(Exhaustive.ID, s).shardMiner(NAMED));
    assertEquals("lexical", Samplers.of(Bm25Negatives.ID, s).shardMiner(NAMED));
    assertEquals("mh 3", Samplers.of(DynnibalMh.ID, s).shardMiner(NAMED));
    assertEquals("rejection 50.0", Samplers.of(DynnibalRejection.ID, s).shardMiner(NAMED));
    assertEquals("auto 5000 else mh 3", Samplers.of(Auto.ID, s).shardMiner(NAMED));
  }

  @Test
  void autoMinesExactlyUpToItsBoundOfTargetsTimesDimensionAndByTheTreeAbove() {
    Auto auto = (Auto) Samplers.of(Auto.ID);
    int bound = auto.exactMaxTargets();
    assertTrue(auto.exactFor(0, 64));
    assertTrue(auto.exactFor(bound, Auto.REFERENCE_DIMENSION));
    assertFalse(auto.exactFor(bound + 1L, Auto.REFERENCE_DIMENSION));
    // The pass costs targets x d': twice the dimension, half the targets.
    assertTrue(auto.exactFor(bound / 2, 2 * Auto.REFERENCE_DIMENSION));
    assertFalse(auto.exactFor(bound / 2 + 1L, 2 * Auto.REFERENCE_DIMENSION));
    assertTrue(auto.exactFor(2L * bound, Auto.REFERENCE_DIMENSION / 2));
  }

  @Test
  void onlyTheNegativeCacheFindsNegativesInTheTrainer() {
    TrainerNegatives.Context context = new TrainerNegatives.Context(8, 1, 20f, 1);
    for (String id : Samplers.NAMES) {
      boolean cache = id.equals(NegativeCacheSampler.ID);
      assertEquals(cache, Samplers.of(id).trainerNegatives(context) != null, id);
    }
  }

  @Test
  void memoryCountsWhatEachSamplerHoldsOnTheAccelerator() {
    MiningFloats f = new MiningFloats(1_000, 20, 3);
    assertEquals(0, Samplers.of(InBatch.ID).miningFloats(f));
    assertEquals(0, Samplers.of(Uniform.ID).miningFloats(f));
    assertEquals(1_000, Samplers.of(Exhaustive.ID).miningFloats(f));
    assertEquals(1_000, Samplers.of(StochasticNegativeMining.ID).miningFloats(f));
    assertEquals(20, Samplers.of(NegativeCacheSampler.ID).miningFloats(f));
    assertEquals(3, Samplers.of(DynnibalMh.ID).miningFloats(f));
    assertEquals(3, Samplers.of(DynnibalRejection.ID).miningFloats(f));
    assertEquals(3, Samplers.of(ExactCache.ID).miningFloats(f));
    assertEquals(3, Samplers.of(Auto.ID).miningFloats(f));
    assertEquals(0, Samplers.of(Bm25Negatives.ID).miningFloats(f));
    assertEquals((4 + 16) * 8 + 4 * 4, MiningFloats.reencodingMap(4, 16, 8));
  }

  @Test
  void onlyBm25OverridesTheNegativesMode() {
    for (String id : Samplers.NAMES) {
      boolean lexical = id.equals(Bm25Negatives.ID);
      for (NegativesMode configured : NegativesMode.values()) {
        NegativesMode mode = Samplers.of(id).negativesMode(configured);
        assertEquals(lexical ? NegativesMode.TOP_K : configured, mode, id);
      }
    }
  }

  @Test
  void onlyInBatchSkipsModelUpdatesAndOnlyRejectionAndAutoAreLeftOutOfTheDefaultComparison() {
    for (String id : Samplers.NAMES) {
      assertEquals(!id.equals(InBatch.ID), Samplers.of(id).publishesModelUpdates(), id);
    }
    assertFalse(Samplers.comparedByDefault().contains(DynnibalRejection.ID));
    assertFalse(Samplers.comparedByDefault().contains(Auto.ID));
    assertEquals(Samplers.NAMES.size() - 2, Samplers.comparedByDefault().size());
    assertEquals(List.copyOf(Samplers.NAMES), Samplers.NAMES);
  }

  /** The setting's description is a constant, so it names the samplers by hand: all of them. */
  @Test
  void theSamplerSettingsDescriptionNamesEveryRegisteredSampler() throws Exception {
    String description =
        SamplerSettings.class
            .getField("name")
            .getAnnotation(io.dynnibal.settings.Setting.class)
            .value();
    List<String> named =
        java.util.Arrays.stream(description.substring(description.indexOf(':') + 1).split(",| or "))
            .map(String::trim)
            .filter(w -> !w.isEmpty())
            .toList();
    assertEquals(Samplers.NAMES, named);
  }

  @Test
  void theMhBudgetIsAShareOfTheShardCappedAtTheMaximum() {
    DynnibalMh defaults = (DynnibalMh) Samplers.of(DynnibalMh.ID);
    assertEquals(1_592, defaults.clusters(31_833));
    assertEquals(2_942, defaults.clusters(58_830));
    assertEquals(4_096, defaults.clusters(1_000_000));
    assertEquals(0, defaults.clusters(0));
    assertEquals(500, new DynnibalMh(8, 8, 64, 1024, 0.1, 500).clusters(10_000));
    assertEquals(1_600, new DynnibalMh(8, 8, 64, 1024, 0, 1600).clusters(10));
  }
}
