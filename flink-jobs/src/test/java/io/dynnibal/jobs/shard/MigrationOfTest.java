package io.dynnibal.jobs.shard;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dynnibal.schemas.CacheMapKind;
import io.dynnibal.schemas.Matrices;
import io.dynnibal.schemas.ModelUpdate;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * When a shard moves its cache by the update's map, when it re-encodes every target at once, and
 * when it applies the map first and re-encodes exactly group by group.
 */
class MigrationOfTest {
  private static ModelUpdate update(long version, boolean exactly) {
    return update(version, exactly, null);
  }

  private static ModelUpdate update(long version, boolean exactly, Long mapFrom) {
    float[][] identity = {{1, 0}, {0, 1}};
    return ModelUpdate.newBuilder()
        .setVersion(version)
        .setStep(100 * version)
        .setSnapshotUri("file:/nowhere")
        .setLandmarkIds(List.of("a", "b"))
        .setLandmarks(Matrices.of(identity))
        .setProjection(Matrices.of(identity))
        .setMapKind(CacheMapKind.LINEAR)
        .setCacheMap(Matrices.of(identity))
        .setCreatedMs(0)
        .setReencodeExactly(exactly)
        .setMapFrom(mapFrom)
        .build();
  }

  @Test
  void theNextVersionMovesByItsMap() {
    assertEquals(Migration.MAP, Migration.of(update(4, false), 3, 512));
  }

  @Test
  void anUpdateThatSkipsAVersionReEncodesExactlyAtOnce() {
    assertEquals(Migration.EXACT, Migration.of(update(5, false), 3, 512));
    assertEquals(Migration.EXACT, Migration.of(update(5, true), 3, 512));
  }

  @Test
  void anUpdateMarkedExactIsMappedThenReEncodedGroupByGroup() {
    assertEquals(Migration.MAP_THEN_EXACT, Migration.of(update(4, true), 3, 512));
  }

  @Test
  void withoutAGroupSizeAnUpdateMarkedExactReEncodesAtOnce() {
    assertEquals(Migration.EXACT, Migration.of(update(4, true), 3, 0));
  }

  @Test
  void aMapFromAnOlderVersionMovesTheShardsThatHoldIt() {
    // After a restore the trainer skipped versions 4 and 5 (a lost branch): 6 maps from 3.
    ModelUpdate afterRestore = update(6, false, 3L);
    assertEquals(Migration.MAP, Migration.of(afterRestore, 3, 512));
  }

  @Test
  void aShardThatTookALostVersionReEncodesExactly() {
    ModelUpdate afterRestore = update(6, false, 3L);
    assertEquals(Migration.EXACT, Migration.of(afterRestore, 5, 512), "holds lost 5");
    assertEquals(Migration.EXACT, Migration.of(afterRestore, 4, 512), "holds lost 4");
  }

  @Test
  void anUpdateWhoseMapNoShardMayApplyReEncodesEveryShardAtOnce() {
    // An exact restart: its map was fit on caches of several versions (map_from -1).
    assertEquals(Migration.EXACT, Migration.of(update(6, true, -1L), 3, 512));
  }
}
