package io.dynnibal.trainer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.index.nystrom.CacheMap;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.FeatureConfig;
import io.dynnibal.model.features.Features;
import io.dynnibal.schemas.Matrices;
import io.dynnibal.state.TargetFeatures;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The landmarks of a re-encode cycle: drawn once, then the same targets at every version. */
class ReencodeCycleTest {
  private static final DualEncoderConfig SMALL =
      new DualEncoderConfig(new FeatureConfig(1 << 10, 16, 4, 3, 4), 8, 16, 8, true, 20f);
  private static final int LANDMARKS = 4;

  @TempDir Path dir;

  @Test
  void theFirstCycleDrawsLandmarksAndLaterCyclesKeepThem() {
    try (DualEncoder encoder = DualEncoder.create(SMALL, 1)) {
      URI base = dir.toUri();
      ReencodeCycle.Outcome first =
          ReencodeCycle.build(encoder, targets(encoder, 0, 12, 0), null, LANDMARKS, 1, 10, base, 7);
      assertNotNull(first);
      List<String> ids = first.update().getLandmarkIds();
      assertEquals(LANDMARKS, ids.size());
      assertEquals(ids, first.landmarksMoved().stream().map(t -> t.id).toList());
      // The next cycle's fresh samples are other targets (and one landmark again, counted once).
      List<TargetFeatures> fresh = targets(encoder, 100, 6, 1);
      fresh.add(first.landmarksMoved().get(0));
      ReencodeCycle.Outcome second =
          ReencodeCycle.build(encoder, fresh, first.landmarksMoved(), LANDMARKS, 2, 20, base, 7);
      assertNotNull(second);
      assertEquals(ids, second.update().getLandmarkIds());
    }
  }

  @Test
  void theCycleThatDrawsTheLandmarksReEncodesExactlyAndLaterCyclesMoveTheCache() {
    try (DualEncoder encoder = DualEncoder.create(SMALL, 4)) {
      URI base = dir.toUri();
      ReencodeCycle.Outcome first =
          ReencodeCycle.build(encoder, targets(encoder, 0, 12, 0), null, LANDMARKS, 1, 10, base, 7);
      assertTrue(first.update().getReencodeExactly(), "the version-0 cache is in another basis");
      ReencodeCycle.Outcome second =
          ReencodeCycle.build(
              encoder,
              targets(encoder, 100, 8, 1),
              first.landmarksExact(),
              LANDMARKS,
              2,
              20,
              base,
              7);
      assertFalse(
          second.update().getReencodeExactly(), "the same landmarks: a map moves the cache");
    }
  }

  @Test
  void theLandmarksMoveAsTheShardsMoveThemOrAsExactReEncodingPlacesThem() {
    try (DualEncoder encoder = DualEncoder.create(SMALL, 2)) {
      List<TargetFeatures> fresh = targets(encoder, 0, 12, 0);
      ReencodeCycle.Outcome cycle =
          ReencodeCycle.build(encoder, fresh, null, LANDMARKS, 1, 10, dir.toUri(), 7);
      CacheMap map =
          new CacheMap(LANDMARKS, Matrices.values(cycle.update().getCacheMap(), "cache map"));
      for (int i = 0; i < LANDMARKS; i++) {
        TargetFeatures moved = cycle.landmarksMoved().get(i);
        TargetFeatures before =
            fresh.stream().filter(t -> t.id.equals(moved.id)).findFirst().orElseThrow();
        float[] expected = before.cache.clone();
        map.applyInPlace(expected, new float[LANDMARKS]);
        assertArrayEquals(expected, moved.cache, 1e-6f);
        assertEquals(1, moved.version);
        assertEquals(moved.id, cycle.landmarksExact().get(i).id);
        assertEquals(LANDMARKS, cycle.landmarksExact().get(i).cache.length);
      }
    }
  }

  @Test
  void tooFewSamplesWaitForMore() {
    try (DualEncoder encoder = DualEncoder.create(SMALL, 3)) {
      assertNull(
          ReencodeCycle.build(
              encoder,
              targets(encoder, 0, 2 * LANDMARKS - 1, 0),
              null,
              LANDMARKS,
              1,
              1,
              dir.toUri(),
              7));
      ReencodeCycle.Outcome first =
          ReencodeCycle.build(
              encoder, targets(encoder, 0, 12, 0), null, LANDMARKS, 1, 1, dir.toUri(), 7);
      // With the landmarks kept, d' fresh samples more make 2 d'.
      assertNull(
          ReencodeCycle.build(
              encoder,
              targets(encoder, 50, LANDMARKS - 1, 1),
              first.landmarksMoved(),
              LANDMARKS,
              2,
              2,
              dir.toUri(),
              7));
      assertNotNull(
          ReencodeCycle.build(
              encoder,
              targets(encoder, 50, LANDMARKS, 1),
              first.landmarksMoved(),
              LANDMARKS,
              2,
              2,
              dir.toUri(),
              7));
    }
  }

  /** {@code n} targets with distinct texts and random cache vectors at {@code version}. */
  private static List<TargetFeatures> targets(DualEncoder encoder, int from, int n, long version) {
    Random random = new Random(from);
    List<TargetFeatures> out = new ArrayList<>();
    String[] words = {"audio", "video", "editor", "perl", "python", "game", "font", "kernel"};
    for (int i = from; i < from + n; i++) {
      Features f =
          encoder.featurizeTarget(
              "pkg" + i + " " + words[i % words.length] + " " + words[(i * 3) % words.length]);
      float[] cache = new float[LANDMARKS];
      for (int j = 0; j < LANDMARKS; j++) {
        cache[j] = (float) random.nextGaussian();
      }
      TargetFeatures t = new TargetFeatures("t" + i, f.ids(), f.weights(), cache);
      t.version = version;
      out.add(t);
    }
    return out;
  }
}
