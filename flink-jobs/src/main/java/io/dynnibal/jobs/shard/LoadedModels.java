package io.dynnibal.jobs.shard;

import io.dynnibal.schemas.ModelUpdate;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * The model versions one subtask has loaded ({@link ShardModel}), each loaded once and shared by
 * the subtask's keys. At most {@value #KEPT} are kept: a subtask's keys move from one update to the
 * next together, so the oldest is closed when a newer one is loaded (a key still at it would load
 * it again).
 */
final class LoadedModels implements AutoCloseable {
  /** Versions loaded at once in a subtask. */
  static final int KEPT = 2;

  private final ShardSettings settings;
  private final TreeMap<Long, ShardModel> models = new TreeMap<>();

  LoadedModels(ShardSettings settings) {
    this.settings = settings;
  }

  /**
   * The model of {@code update}'s version, or version 0's (derived from the settings) when {@code
   * update} is null.
   *
   * @throws RuntimeException when the update's model cannot be loaded
   */
  ShardModel at(ModelUpdate update) {
    return update == null
        ? loaded(0, () -> ShardModel.initial(settings))
        : loaded(update.getVersion(), () -> ShardModel.of(update, settings.model()));
  }

  /** The newest loaded version; one is loaded whenever a target is encoded or shipped. */
  ShardModel newest() {
    return models.lastEntry().getValue();
  }

  private ShardModel loaded(long version, Supplier<ShardModel> load) {
    ShardModel m = models.get(version);
    if (m == null) {
      m = load.get();
      models.put(version, m);
      while (models.size() > KEPT) {
        models.pollFirstEntry().getValue().close();
      }
    }
    return m;
  }

  @Override
  public void close() {
    models.values().forEach(ShardModel::close);
    models.clear();
  }
}
