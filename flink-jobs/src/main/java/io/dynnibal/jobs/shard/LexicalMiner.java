package io.dynnibal.jobs.shard;

import io.dynnibal.lexical.Bm25Index;
import io.dynnibal.model.features.Features;
import io.dynnibal.state.ShardIndex;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.QueryBatch;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * BM25 negatives (the {@code bm25} sampler): for each query, the {@code negatives.per.example}
 * targets of the shard key whose texts score best against the query's text, its positive excluded,
 * each offered with its BM25 score as its logit (the merge keeps the best across shards).
 *
 * <p>Invariant: before a key answers a batch, its BM25 index ({@link Bm25Index}, a heap cache like
 * the tree) holds exactly the targets its tree holds, each with its stored text. Targets that
 * joined the tree since the last batch are added; a new tree (a start, a restore, an exact
 * re-encode) is reconciled with the index by id; a target stored with a new text or removed is
 * refreshed from the state. A hit the tree no longer holds is dropped from the index and never
 * offered.
 */
final class LexicalMiner implements HardNegativeMiner {
  private static final Logger LOG = LoggerFactory.getLogger(LexicalMiner.class);

  /** Hits read beyond the negatives wanted, for the positive and targets that left the tree. */
  private static final int SLACK = 4;

  private final ShardSettings settings;
  private final Map<Integer, KeyIndex> keys = new HashMap<>();

  LexicalMiner(ShardSettings settings) {
    this.settings = settings;
  }

  /** One key's BM25 index and what of the key's tree it has seen. */
  private static final class KeyIndex {
    final Bm25Index bm25 = new Bm25Index();
    final Set<String> held = new HashSet<>();
    final Set<String> changed = new LinkedHashSet<>();
    ShardIndex syncedWith;
    int joined;
    long withoutText;
  }

  @Override
  public Mined mine(Shard shard, List<Features> queries, QueryBatch batch, SplittableRandom random)
      throws Exception {
    KeyIndex k = synced(shard);
    Collected out = new Collected(queries.size());
    for (int q = 0; q < queries.size(); q++) {
      for (TargetFeatures t : best(k, shard, batch.queryTexts[q], batch.targetIds[q])) {
        out.add(q, t);
      }
    }
    return out.result();
  }

  /**
   * The best {@code negatives.per.example} targets for a query other than its positive; fewer when
   * the query shares no word with enough targets.
   */
  private List<TargetFeatures> best(KeyIndex k, Shard shard, String query, String positive)
      throws Exception {
    int perExample = settings.minedPerExample();
    int wanted = perExample + SLACK;
    while (true) {
      List<Bm25Index.Hit> hits = k.bm25.search(query, wanted);
      List<TargetFeatures> chosen = new ArrayList<>(perExample);
      boolean dropped = false;
      for (Bm25Index.Hit hit : hits) {
        if (chosen.size() == perExample) {
          break;
        }
        if (!shard.index().contains(hit.id())) { // left the tree by a path that says nothing
          drop(k, hit.id());
          dropped = true;
        } else if (!hit.id().equals(positive)) {
          chosen.add(shard.targets().get(hit.id()).withoutCache(hit.score()));
        }
      }
      // Each round that drops a target shrinks the index, so this ends.
      if (chosen.size() == perExample || !dropped || hits.size() < wanted) {
        return chosen;
      }
    }
  }

  /** The key's BM25 index, brought to the tree's targets first. */
  private KeyIndex synced(Shard shard) throws Exception {
    KeyIndex k = keys.computeIfAbsent(shard.key(), key -> new KeyIndex());
    ShardIndex tree = shard.index();
    if (k.syncedWith != tree) {
      List<String> ids = tree.ids();
      Set<String> live = new HashSet<>(ids);
      for (String id : List.copyOf(k.held)) {
        if (!live.contains(id)) {
          drop(k, id);
        }
      }
      for (String id : ids) {
        if (!k.held.contains(id)) {
          add(k, shard, id);
        }
      }
      k.syncedWith = tree;
      k.joined = tree.joined();
      k.changed.clear();
    } else {
      if (tree.joined() > k.joined) {
        for (String id : tree.idsJoinedSince(k.joined)) {
          add(k, shard, id);
          k.changed.remove(id);
        }
        k.joined = tree.joined();
      }
      for (String id : k.changed) {
        if (tree.contains(id)) {
          add(k, shard, id);
        } else {
          drop(k, id);
        }
      }
      k.changed.clear();
    }
    return k;
  }

  private void add(KeyIndex k, Shard shard, String id) throws Exception {
    String text = shard.texts().get(id);
    if (text == null) {
      // Stored before texts were (features only): nothing to score it by.
      if (k.withoutText++ == 0) {
        LOG.warn(
            "shard key {}: target {} has no stored text (state written before texts were kept);"
                + " BM25 cannot offer such targets",
            shard.key(),
            id);
      }
      drop(k, id);
      return;
    }
    k.bm25.upsert(id, text);
    k.held.add(id);
  }

  private static void drop(KeyIndex k, String id) {
    if (k.held.remove(id)) {
      k.bm25.delete(id);
    }
  }

  @Override
  public void targetChanged(int key, String id) {
    KeyIndex k = keys.get(key);
    if (k != null) { // a key not indexed yet reads every text when it first mines
      k.changed.add(id);
    }
  }

  @Override
  public void close() {
    keys.values().forEach(k -> k.bm25.close());
    keys.clear();
  }
}
