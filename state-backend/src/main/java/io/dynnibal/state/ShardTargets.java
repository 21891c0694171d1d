package io.dynnibal.state;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;

/**
 * A shard's targets in keyed state: RocksDB map state from target id to {@link TargetFeatures}
 * (features, cache vector, its version). The state is the truth; a {@link ShardIndex} is a heap
 * cache of it, built by {@link #buildIndex} after a start or restore.
 */
public final class ShardTargets {
  /** The map state of every shard key (Flink's POJO serializer for the values). */
  public static final MapStateDescriptor<String, TargetFeatures> DESCRIPTOR =
      new MapStateDescriptor<>("targets", Types.STRING, TypeInformation.of(TargetFeatures.class));

  private ShardTargets() {}

  /**
   * The heap index of one key's targets, bulk-built from its state. Targets stored without a cache
   * vector yet (waiting to be encoded when the state was saved) are not indexed but handed to
   * {@code waiting}.
   */
  public static ShardIndex buildIndex(
      MapState<String, TargetFeatures> targets,
      int dimension,
      double treeBase,
      long seed,
      Consumer<String> waiting)
      throws Exception {
    List<String> ids = new ArrayList<>();
    List<float[]> vectors = new ArrayList<>();
    for (Map.Entry<String, TargetFeatures> entry : targets.entries()) {
      if (entry.getValue().cache == null) {
        waiting.accept(entry.getKey());
        continue;
      }
      ids.add(entry.getKey());
      vectors.add(entry.getValue().cache.clone()); // the tree keeps and moves its own copy
    }
    return ShardIndex.build(dimension, treeBase, ids, vectors, seed);
  }
}
