package io.dynnibal.jobs.shard;

import io.dynnibal.state.ShardIndex;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

/**
 * The shard keys' SG tree shapes ({@link ShardIndex#shape}), saved with every checkpoint so that a
 * restore rebuilds each key's tree from its shape and the key's state ({@link ShardIndex#restore})
 * instead of in bulk: on a large shard the bulk build is what a restore would wait for. Consistent
 * with the keyed state, as both are taken at one barrier.
 *
 * <p>Operator list state, not union: at an unchanged parallelism each subtask gets its own entries
 * back and reads only those (a union, which every subtask reads whole, would not do at a hundred
 * million targets); after a rescale, a key whose shape landed on another subtask is built in bulk.
 * A shape costs the ids' bytes plus about 6 bytes a target, and is written again only when its
 * index changed since the last checkpoint.
 */
final class TreeShapes {
  private static final ListStateDescriptor<Tuple2<Integer, byte[]>> DESCRIPTOR =
      new ListStateDescriptor<>(
          "tree-shapes", Types.TUPLE(Types.INT, Types.PRIMITIVE_ARRAY(Types.BYTE)));

  /** A key's shape as written at a checkpoint, reused while its index has not changed. */
  private record Written(ShardIndex index, long changes, byte[] shape) {}

  private final ListState<Tuple2<Integer, byte[]>> state;
  private final Map<Integer, byte[]> restored;
  private Map<Integer, Written> written = new HashMap<>();

  private TreeShapes(ListState<Tuple2<Integer, byte[]>> state, Map<Integer, byte[]> restored) {
    this.state = state;
    this.restored = restored;
  }

  /** The shapes of this subtask's keys in the state it starts from (none on a fresh start). */
  static TreeShapes restore(OperatorStateStore store, TaskInfo task) throws Exception {
    ListState<Tuple2<Integer, byte[]>> state = store.getListState(DESCRIPTOR);
    Map<Integer, byte[]> restored = new HashMap<>();
    for (Tuple2<Integer, byte[]> shape : state.get()) {
      // Its own keys' only: after a rescale, entries are dealt out without regard to keys.
      int subtask =
          KeyGroupRangeAssignment.assignKeyToParallelOperator(
              shape.f0, task.getMaxNumberOfParallelSubtasks(), task.getNumberOfParallelSubtasks());
      if (subtask == task.getIndexOfThisSubtask()) {
        restored.put(shape.f0, shape.f1);
      }
    }
    return new TreeShapes(state, restored);
  }

  /** No operator state (a harness that initializes none): nothing restored, nothing saved. */
  static TreeShapes none() {
    return new TreeShapes(null, new HashMap<>());
  }

  /** The restored shape of {@code key}, once; null when there is none. */
  byte[] take(int key) {
    return restored.remove(key);
  }

  /**
   * Saves the shape of every key's index for the checkpoint being taken, and the restored shapes of
   * keys whose trees are not built yet (still the best start for them).
   *
   * @param waiting per key, targets stored again and not encoded yet: they come back without a
   *     vector
   */
  void save(Map<Integer, ShardIndex> indexes, Map<Integer, ? extends Set<String>> waiting)
      throws Exception {
    if (state == null) {
      return;
    }
    List<Tuple2<Integer, byte[]>> shapes = new ArrayList<>();
    Map<Integer, Written> now = new HashMap<>();
    for (Map.Entry<Integer, ShardIndex> e : indexes.entrySet()) {
      ShardIndex index = e.getValue();
      Set<String> stale = waiting.containsKey(e.getKey()) ? waiting.get(e.getKey()) : Set.of();
      Written last = written.get(e.getKey());
      byte[] shape =
          last != null && last.index == index && last.changes == index.changes() && stale.isEmpty()
              ? last.shape // between model updates under negatives.pool=all, most checkpoints
              : index.shape(stale::contains);
      now.put(e.getKey(), new Written(index, index.changes(), shape));
      shapes.add(Tuple2.of(e.getKey(), shape));
    }
    written = now;
    for (Map.Entry<Integer, byte[]> e : restored.entrySet()) {
      if (!indexes.containsKey(e.getKey())) {
        shapes.add(Tuple2.of(e.getKey(), e.getValue()));
      }
    }
    state.update(shapes);
  }
}
