package io.dynnibal.state;

import io.dynnibal.index.VectorMath;
import io.dynnibal.index.nystrom.CacheMap;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;

/**
 * A shard's targets in keyed state, the truth its heap {@link ShardIndex} is built from.
 *
 * <p>Per target (RocksDB map state, id to {@link TargetFeatures}): its text and its cache vector as
 * written at some model version, the target's <em>base</em> ({@code version}). Features are not
 * stored: they are recomputed from the text when a target is shipped or encoded (cheap, against the
 * state's size per target if they were kept). Per key ({@link CacheBases}, value state): the map
 * from each base to the current version. A model update that moves the cache by a map therefore
 * writes one small value, not every target; only an exact re-encode rewrites them.
 *
 * <p>Records written before this layout hold features and no text, and all sit at the version the
 * key held (updates rewrote every record); they are read as they are.
 */
public final class ShardTargets {
  /** The map state of every shard key (Flink's POJO serializer for the values). */
  public static final MapStateDescriptor<String, TargetFeatures> DESCRIPTOR =
      new MapStateDescriptor<>("targets", Types.STRING, TypeInformation.of(TargetFeatures.class));

  public static final ValueStateDescriptor<CacheBases> BASES =
      new ValueStateDescriptor<>("cache-bases", TypeInformation.of(CacheBases.class));

  /** Sets a target's features from its text (the target tower's featurizer). */
  @FunctionalInterface
  public interface Featurizer {
    void featurize(TargetFeatures target);
  }

  /** Sets {@code cache} and {@code version} of each target (features set) with a new model. */
  @FunctionalInterface
  public interface ExactEncoder {
    void encode(List<TargetFeatures> targets) throws Exception;
  }

  private final MapState<String, TargetFeatures> targets;
  private final ValueState<CacheBases> bases;
  private final Featurizer featurizer;

  public ShardTargets(
      MapState<String, TargetFeatures> targets,
      ValueState<CacheBases> bases,
      Featurizer featurizer) {
    this.targets = targets;
    this.bases = bases;
    this.featurizer = featurizer;
  }

  /** Stores a new or changed target, not encoded yet (no cache vector). */
  public void store(String id, String text, long version) throws Exception {
    forget(targets.get(id), version);
    TargetFeatures t = new TargetFeatures();
    t.id = id;
    t.text = text;
    t.version = version;
    targets.put(id, t);
  }

  public void remove(String id, long currentVersion) throws Exception {
    forget(targets.get(id), currentVersion);
    targets.remove(id);
  }

  /** The ids of every target the key stores, encoded or not (reads the keys only). */
  public List<String> ids() throws Exception {
    List<String> ids = new ArrayList<>();
    for (String id : targets.keys()) {
      ids.add(id);
    }
    return ids;
  }

  /**
   * A stored target's text; null if the shard has no such target, or holds it in the layout before
   * texts were stored (features only).
   */
  public String text(String id) throws Exception {
    TargetFeatures t = targets.get(id);
    return t == null ? null : t.text;
  }

  /** A stored target with its features, for encoding; null if the shard has no such target. */
  public TargetFeatures withFeatures(String id) throws Exception {
    TargetFeatures t = targets.get(id);
    if (t != null) {
      featurize(t);
    }
    return t;
  }

  /**
   * Stores the cache vectors just encoded at {@code version}, the key's current one (each target as
   * returned by {@link #withFeatures}, its cache set).
   */
  public void encoded(List<TargetFeatures> group, long version) throws Exception {
    if (group.isEmpty()) {
      return;
    }
    CacheBases b = bases(version);
    if (!b.has(version) && b.size() >= CacheBases.MAX_BASES) {
      rebase(b, version);
    }
    for (TargetFeatures t : group) {
      t.version = version;
      t.encodedAt = -1;
      targets.put(t.id, lean(t));
    }
    b.added(version, group.size());
    bases.update(b);
  }

  /**
   * What a shard ships of a target (a negative, a positive): its features and {@code logit}, no
   * cache vector; null if the shard has no such target.
   */
  public TargetFeatures shipped(String id, float logit, long currentVersion) throws Exception {
    TargetFeatures t = targets.get(id);
    if (t == null) {
      return null;
    }
    featurize(t);
    TargetFeatures out = t.withoutCache(logit);
    out.version = currentVersion;
    return out;
  }

  /**
   * What a shard ships of each target as a regression sample: as {@link #shipped}, with its cache
   * vector at the current version, the key's maps read once for all of them (the value holds up to
   * {@link CacheBases#MAX_BASES} d' x d' maps).
   */
  public List<TargetFeatures> shippedWithCache(List<String> ids, long currentVersion)
      throws Exception {
    CacheBases b = bases(currentVersion);
    CacheBases.Mover mover = b.mover();
    List<TargetFeatures> out = new ArrayList<>(ids.size());
    for (String id : ids) {
      TargetFeatures t = targets.get(id);
      if (t == null) {
        continue;
      }
      featurize(t);
      TargetFeatures shipped = t.withoutCache(0f);
      if (t.cache != null && b.has(t.version)) {
        shipped.cache = mover.moveInPlace(t.version, t.cache); // t is this call's copy
        shipped.version = currentVersion;
      }
      out.add(shipped);
    }
    return out;
  }

  /** How many stored targets have a cache vector (whether or not an index holds them). */
  public long encodedCount(long currentVersion) throws Exception {
    long n = 0;
    for (long c : bases(currentVersion).counts) {
      n += c;
    }
    return n;
  }

  /** Moves every stored cache vector from the current version on by {@code map}: O(bases d'^3). */
  public int move(CacheMap map, long currentVersion) throws Exception {
    CacheBases b = bases(currentVersion);
    b.compose(map);
    bases.update(b);
    long n = 0;
    for (long c : b.counts) {
      n += c;
    }
    return (int) n;
  }

  /**
   * Re-encodes every encoded target with {@code exact} (which sets the new version), in groups of
   * {@code groupSize}, rewriting each; afterwards every target's base is {@code newVersion}.
   */
  public int reencode(ExactEncoder exact, long newVersion, int groupSize) throws Exception {
    List<Map.Entry<String, TargetFeatures>> group = new ArrayList<>(groupSize);
    int count = 0;
    for (Iterator<Map.Entry<String, TargetFeatures>> it = targets.iterator(); it.hasNext(); ) {
      Map.Entry<String, TargetFeatures> entry = it.next();
      if (entry.getValue().cache == null) {
        continue;
      }
      group.add(entry);
      if (group.size() == groupSize) {
        count += reencodeGroup(group, exact);
      }
    }
    count += reencodeGroup(group, exact);
    CacheBases b = new CacheBases();
    b.added(newVersion, count);
    bases.update(b);
    return count;
  }

  /**
   * The ids of encoded targets whose cache was last encoded exactly before {@code version} (moved
   * there by maps since, whether composed per base or rewritten by a rebase).
   */
  public List<String> idsEncodedBefore(long version) throws Exception {
    List<String> ids = new ArrayList<>();
    for (Map.Entry<String, TargetFeatures> entry : targets.entries()) {
      TargetFeatures t = entry.getValue();
      if (t.cache != null && t.exactAt() < version) {
        ids.add(entry.getKey());
      }
    }
    return ids;
  }

  /**
   * Re-encodes with {@code exact} those of {@code ids} still encoded exactly only before {@code
   * before} (a target gone, re-stored or encoded since is skipped), and stores each at the key's
   * current version. A target that encodes to a non-finite vector keeps the one its base's map
   * gives (and is not returned).
   *
   * @return the re-encoded targets, each with its new cache vector (current version)
   */
  public List<TargetFeatures> reencodeSome(
      List<String> ids, long before, ExactEncoder exact, long currentVersion) throws Exception {
    CacheBases b = bases(currentVersion);
    if (!b.has(currentVersion) && b.size() >= CacheBases.MAX_BASES) {
      // Before reading the group, so each target's base below is the one it is counted at.
      rebase(b, currentVersion);
    }
    List<TargetFeatures> group = new ArrayList<>(ids.size());
    for (String id : ids) {
      TargetFeatures t = targets.get(id);
      if (t != null && t.cache != null && t.exactAt() < before) {
        featurize(t);
        group.add(t);
      }
    }
    if (group.isEmpty()) {
      bases.update(b);
      return group;
    }
    long[] from = new long[group.size()];
    for (int i = 0; i < from.length; i++) {
      from[i] = group.get(i).version;
    }
    exact.encode(group);
    List<TargetFeatures> stored = new ArrayList<>(group.size());
    for (int i = 0; i < group.size(); i++) {
      TargetFeatures t = group.get(i);
      if (!VectorMath.isFinite(t.cache)) {
        continue; // keeps the vector its base's map gives; due again only after a restore
      }
      b.removed(from[i]);
      b.added(currentVersion, 1);
      t.version = currentVersion;
      t.encodedAt = -1;
      float[] cache = t.cache.clone();
      targets.put(t.id, lean(t));
      t.cache = cache;
      stored.add(t);
    }
    bases.update(b);
    return stored;
  }

  private int reencodeGroup(List<Map.Entry<String, TargetFeatures>> group, ExactEncoder exact)
      throws Exception {
    List<TargetFeatures> values = new ArrayList<>(group.size());
    for (Map.Entry<String, TargetFeatures> e : group) {
      TargetFeatures t = e.getValue();
      featurize(t);
      values.add(t);
    }
    exact.encode(values);
    for (int i = 0; i < group.size(); i++) {
      values.get(i).encodedAt = -1;
      group.get(i).setValue(lean(values.get(i)));
    }
    int n = group.size();
    group.clear();
    return n;
  }

  /** The ids and current vectors an index of the key holds, in the state's order. */
  public record Indexed(List<String> ids, List<float[]> vectors) {}

  /**
   * What the key's heap index holds ({@link ShardIndex#build} or {@link ShardIndex#restore} over
   * it): every encoded target that {@code indexed} accepts (all, or those pairs named: {@code
   * negatives.pool}), at {@code currentVersion}. Targets stored without a cache vector yet (waiting
   * to be encoded when the state was saved), or at a version no map leads from, are handed to
   * {@code waiting} instead.
   */
  public Indexed indexedVectors(
      long currentVersion, java.util.function.Predicate<String> indexed, Consumer<String> waiting)
      throws Exception {
    CacheBases b = bases(currentVersion);
    CacheBases.Mover mover = b.mover();
    List<String> ids = new ArrayList<>();
    List<float[]> vectors = new ArrayList<>();
    for (Map.Entry<String, TargetFeatures> entry : targets.entries()) {
      TargetFeatures t = entry.getValue();
      if (t.cache != null && !b.has(t.version)) {
        // No map leads from its version: stored as not encoded, so it is encoded like a new one.
        t.cache = null;
        entry.setValue(t);
      }
      if (t.cache == null) {
        waiting.accept(entry.getKey());
        continue;
      }
      if (!indexed.test(entry.getKey())) {
        continue;
      }
      ids.add(entry.getKey());
      vectors.add(mover.moveInPlace(t.version, t.cache)); // the entry's copy: the tree's own
    }
    return new Indexed(ids, vectors);
  }

  /**
   * The key's bases; a key without one (new, or state written before bases existed, when every
   * record sat at the key's version) gets one counted from its records.
   */
  private CacheBases bases(long currentVersion) throws Exception {
    CacheBases b = bases.value();
    if (b != null) {
      return b;
    }
    b = new CacheBases();
    long n = 0;
    for (TargetFeatures t : targets.values()) {
      if (t.cache != null && t.version == currentVersion) {
        n++;
      }
    }
    if (n > 0) {
      b.added(currentVersion, n);
    }
    bases.update(b);
    return b;
  }

  /** Rewrites every target not at {@code version} (the current one) at it: too many bases. */
  private void rebase(CacheBases b, long version) throws Exception {
    CacheBases.Mover mover = b.mover();
    for (Map.Entry<String, TargetFeatures> entry : targets.entries()) {
      TargetFeatures t = entry.getValue();
      if (t.cache == null || t.version == version || !b.has(t.version)) {
        continue;
      }
      mover.moveInPlace(t.version, t.cache);
      long from = t.version;
      t.encodedAt = t.exactAt(); // moved by maps, not encoded: an exact refinement still wants it
      t.version = version;
      entry.setValue(t);
      b.removed(from);
      b.added(version, 1);
    }
  }

  /** The target's count leaves its base when it is replaced or removed. */
  private void forget(TargetFeatures previous, long currentVersion) throws Exception {
    if (previous == null || previous.cache == null) {
      return;
    }
    CacheBases b = bases(currentVersion);
    b.removed(previous.version);
    bases.update(b);
  }

  private void featurize(TargetFeatures t) {
    if (t.featureIds == null && t.text != null) {
      featurizer.featurize(t);
    }
  }

  /** What is stored of a target: the text (and no features) when there is one. */
  private static TargetFeatures lean(TargetFeatures t) {
    if (t.text != null) {
      t.featureIds = null;
      t.featureWeights = null;
    }
    t.logit = 0;
    return t;
  }
}
