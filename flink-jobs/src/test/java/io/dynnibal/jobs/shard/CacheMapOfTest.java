package io.dynnibal.jobs.shard;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.dynnibal.schemas.CacheMapKind;
import io.dynnibal.schemas.Matrices;
import io.dynnibal.schemas.ModelUpdate;
import java.util.List;
import org.junit.jupiter.api.Test;

/** When a shard moves its cache by the update's map and when it re-encodes every target. */
class CacheMapOfTest {
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
    assertNotNull(ShardIndexFunction.cacheMapOf(update(4, false), 3));
  }

  @Test
  void anUpdateThatSkipsAVersionReEncodesExactly() {
    assertNull(ShardIndexFunction.cacheMapOf(update(5, false), 3));
  }

  @Test
  void anUpdateMarkedExactReEncodesEvenAsTheNextVersion() {
    assertNull(ShardIndexFunction.cacheMapOf(update(4, true), 3));
  }

  @Test
  void aMapFromAnOlderVersionMovesTheShardsThatHoldIt() {
    // After a restore the trainer skipped versions 4 and 5 (a lost branch): 6 maps from 3.
    ModelUpdate afterRestore = update(6, false, 3L);
    assertNotNull(ShardIndexFunction.cacheMapOf(afterRestore, 3));
  }

  @Test
  void aShardThatTookALostVersionReEncodesExactly() {
    ModelUpdate afterRestore = update(6, false, 3L);
    assertNull(ShardIndexFunction.cacheMapOf(afterRestore, 5), "holds lost version 5");
    assertNull(ShardIndexFunction.cacheMapOf(afterRestore, 4), "holds lost version 4");
  }
}
