package io.dynnibal.jobs.shard;

import io.dynnibal.model.DualEncoder;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The encoders of the model versions the shard subtasks of this JVM hold, each loaded once: a
 * TaskManager whose slots run several shard subtasks held one copy of a version's parameters per
 * subtask (the bag tower's feature table alone is 64 MB, and a subtask holds up to two versions).
 * Shards only encode with them, which the encoder allows from several threads at once. Counted: the
 * last holder's release closes the encoder.
 *
 * <p>Invariant: an encoder is in the map exactly while its count of holders is positive.
 */
final class SharedEncoders {
  private static final class Held {
    final DualEncoder encoder;
    int holders;

    Held(DualEncoder encoder) {
      this.encoder = encoder;
    }
  }

  private static final Map<String, Held> HELD = new HashMap<>();

  private SharedEncoders() {}

  /**
   * The encoder known by {@code key} (a snapshot's URI, or what derives the initial encoder),
   * loaded by {@code load} when no holder has it; each call is one more holder, to {@link
   * #release}.
   */
  static synchronized DualEncoder acquire(String key, Supplier<DualEncoder> load) {
    Held held = HELD.get(key);
    if (held == null) {
      held = new Held(load.get());
      HELD.put(key, held);
    }
    held.holders++;
    return held.encoder;
  }

  /** One holder of {@code key} lets go; the last one closes the encoder. */
  static synchronized void release(String key) {
    Held held = HELD.get(key);
    if (held == null) {
      throw new IllegalStateException("no encoder is held as " + key);
    }
    if (--held.holders == 0) {
      HELD.remove(key);
      held.encoder.close();
    }
  }

  /** How many encoders are loaded; for tests. */
  static synchronized int loaded() {
    return HELD.size();
  }
}
