package io.dynnibal.state;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;

/**
 * The ids a shard key's training pairs have named as their positive, under {@code
 * negatives.pool=positives}: the targets its index holds (those of them it stores). A fact about
 * the pairs, not about the targets: an id stays named when its target is deleted (it is indexed
 * again when re-added) or when its pair came before the target (it is indexed when the target
 * arrives). A job that ran under {@code all} recorded no names: restored under {@code positives},
 * its pool starts empty and fills as batches name targets.
 */
public final class NamedPositives {
  public static final MapStateDescriptor<String, Boolean> DESCRIPTOR =
      new MapStateDescriptor<>("positives-named", Types.STRING, Types.BOOLEAN);

  private final MapState<String, Boolean> named;

  public NamedPositives(MapState<String, Boolean> named) {
    this.named = named;
  }

  /** Records the ids as named; returns those that were not named before, each once. */
  public List<String> name(List<String> ids) throws Exception {
    List<String> first = new ArrayList<>();
    for (String id : ids) {
      if (!named.contains(id)) {
        named.put(id, Boolean.TRUE);
        first.add(id);
      }
    }
    return first;
  }

  public boolean contains(String id) throws Exception {
    return named.contains(id);
  }

  /** Every named id of the current key (for an index build). */
  public Set<String> all() throws Exception {
    Set<String> ids = new HashSet<>();
    for (String id : named.keys()) {
      ids.add(id);
    }
    return ids;
  }
}
