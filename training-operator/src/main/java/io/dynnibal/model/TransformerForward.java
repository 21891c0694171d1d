package io.dynnibal.model;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDArrays;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.ParameterStore;
import io.dynnibal.model.features.Features;
import io.dynnibal.model.transformer.BertEncoderBlock;
import io.dynnibal.model.transformer.FastPath;
import io.dynnibal.model.transformer.FrozenPrefixCache;
import io.dynnibal.model.transformer.FrozenPrefixCaches;
import io.dynnibal.model.transformer.TokenIds;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * How a transformer tower runs a batch of texts ({@link FastPath}):
 *
 * <ul>
 *   <li>in {@code lengthBuckets} groups of similar length, each padded to its own longest, the
 *       outputs put back in the batch's order;
 *   <li>with frozen bottom layers and a cache, through the {@link FrozenPrefixCache}: each text's
 *       frozen-layer states come from the cache, or are computed once (without gradients) and kept,
 *       and only the trainable layers run on them.
 * </ul>
 *
 * A text's output is the same on every path, up to the cache's precision: a real token's states
 * never depend on padding ({@link BertEncoderBlock#prefix}), and the frozen layers' weights are the
 * ones the cache was keyed by ({@link #refreshCache}).
 */
final class TransformerForward {
  /** Texts whose frozen states are computed together: a transformer's inference batch. */
  private static final int PREFIX_BATCH = 32;

  private final BertEncoderBlock body;
  private final SparseEmbeddingTable table;
  private final int maxTokens;
  private final int frozenLayers;
  private final FastPath fastPath;
  private FrozenPrefixCache cache;

  TransformerForward(
      BertEncoderBlock body,
      SparseEmbeddingTable table,
      int maxTokens,
      int trainableLayers,
      FastPath fastPath) {
    this.body = body;
    this.table = table;
    this.maxTokens = maxTokens;
    this.frozenLayers = trainableLayers == 0 ? 0 : body.layerCount() - trainableLayers;
    this.fastPath = fastPath;
  }

  /**
   * Finds the cache of the frozen weights as they are now; call after the weights are set or
   * loaded. No cache without frozen layers or without a budget.
   */
  void refreshCache() {
    if (frozenLayers == 0 || fastPath.cacheMegabytes() == 0) {
      cache = null;
      return;
    }
    long fingerprint =
        FrozenPrefixCaches.fingerprint(table.values(), body.prefixParameters(frozenLayers));
    cache = FrozenPrefixCaches.shared(fingerprint, frozenLayers, table.dim(), fastPath, null);
  }

  /** The cache this tower reads, or null. */
  FrozenPrefixCache cache() {
    return cache;
  }

  /** The first {@code maxTokens} token ids of a text. */
  int[] tokens(Features features) {
    int[] ids = features.ids();
    return ids.length <= maxTokens ? ids : Arrays.copyOf(ids, maxTokens);
  }

  /**
   * The unnormalised B x out output of {@code batch}; with {@code input} not null, the B x T x H
   * word embeddings the full path reads, a leaf that may record its gradient.
   */
  NDArray forward(
      List<Features> batch,
      NDArray input,
      ParameterStore store,
      NDManager scope,
      boolean training) {
    List<int[]> tokens = new ArrayList<>(batch.size());
    for (Features f : batch) {
      tokens.add(tokens(f));
    }
    Map<TokenIds, float[]> states = cache == null ? null : states(tokens, store, scope);
    int groups = Math.min(fastPath.lengthBuckets(), tokens.size());
    int[] order = groups == 1 ? identity(tokens.size()) : byLength(tokens);
    int groupSize = (tokens.size() + groups - 1) / groups;
    List<NDArray> outputs = new ArrayList<>();
    for (int from = 0; from < order.length; from += groupSize) {
      int[] rows = Arrays.copyOfRange(order, from, Math.min(order.length, from + groupSize));
      outputs.add(
          states != null
              ? throughCache(rows, tokens, states, store, scope, training)
              : whole(rows, tokens, input, store, scope, training));
    }
    if (outputs.size() == 1) {
      return outputs.get(0);
    }
    long[] place = new long[order.length];
    for (int i = 0; i < order.length; i++) {
      place[order[i]] = i;
    }
    return NDArrays.concat(new NDList(outputs)).get(new NDIndex("{}", scope.create(place)));
  }

  /** The full encoder over rows {@code rows} of the word-embedding input. */
  private NDArray whole(
      int[] rows,
      List<int[]> tokens,
      NDArray input,
      ParameterStore store,
      NDManager scope,
      boolean training) {
    int longest = longest(rows, tokens);
    NDArray x = input;
    if (rows.length != tokens.size() || !Arrays.equals(rows, identity(rows.length))) {
      x = x.get(new NDIndex("{}", scope.create(toLong(rows))));
    }
    if (longest != x.getShape().get(1)) {
      x = x.get(":, :{}", longest);
    }
    NDArray mask = mask(rows, tokens, longest, scope);
    NDArray h = body.prefix(store, x, mask, 0, training);
    return body.suffix(store, h, mask, 0, training);
  }

  /** The trainable layers over the cached states of rows {@code rows}. */
  private NDArray throughCache(
      int[] rows,
      List<int[]> tokens,
      Map<TokenIds, float[]> states,
      ParameterStore store,
      NDManager scope,
      boolean training) {
    int longest = longest(rows, tokens);
    int hidden = table.dim();
    float[] h = new float[rows.length * longest * hidden];
    for (int r = 0; r < rows.length; r++) {
      float[] s = states.get(new TokenIds(tokens.get(rows[r])));
      System.arraycopy(s, 0, h, r * longest * hidden, s.length);
    }
    NDArray mask = mask(rows, tokens, longest, scope);
    NDArray prefix = scope.create(h, new Shape(rows.length, longest, hidden));
    return body.suffix(store, prefix, mask, frozenLayers, training);
  }

  /** Every distinct text's frozen states: from the cache, or computed now and offered to it. */
  private Map<TokenIds, float[]> states(List<int[]> tokens, ParameterStore store, NDManager scope) {
    Map<TokenIds, float[]> out = new HashMap<>();
    List<int[]> missing = new ArrayList<>();
    for (int[] t : tokens) {
      TokenIds key = new TokenIds(t);
      if (!out.containsKey(key)) {
        float[] s = cache.get(t);
        out.put(key, s);
        if (s == null) {
          missing.add(t);
        }
      }
    }
    missing.sort(Comparator.comparingInt(t -> t.length));
    int hidden = table.dim();
    for (int from = 0; from < missing.size(); from += PREFIX_BATCH) {
      List<int[]> chunk = missing.subList(from, Math.min(missing.size(), from + PREFIX_BATCH));
      int[] rows = identity(chunk.size());
      int longest = longest(rows, chunk);
      try (NDManager local = scope.newSubManager()) {
        NDArray x = local.create(embed(chunk, longest), new Shape(chunk.size(), longest, hidden));
        NDArray mask = mask(rows, chunk, longest, local);
        float[] flat = body.prefix(store, x, mask, frozenLayers, false).toFloatArray();
        for (int i = 0; i < chunk.size(); i++) {
          int[] t = chunk.get(i);
          float[] s =
              Arrays.copyOfRange(flat, i * longest * hidden, (i * longest + t.length) * hidden);
          cache.put(t, s, 0);
          out.put(new TokenIds(t), s);
        }
      }
    }
    return out;
  }

  /** B x T x H word embeddings of {@code texts}, zero-padded to {@code longest} tokens. */
  private float[] embed(List<int[]> texts, int longest) {
    int dim = table.dim();
    float[] x = new float[texts.size() * longest * dim];
    for (int i = 0; i < texts.size(); i++) {
      int[] t = texts.get(i);
      for (int p = 0; p < t.length; p++) {
        table.pool(new Features(new int[] {t[p]}, new float[] {1f}), x, (i * longest + p) * dim);
      }
    }
    return x;
  }

  private static NDArray mask(int[] rows, List<int[]> tokens, int longest, NDManager scope) {
    float[] mask = new float[rows.length * longest];
    for (int r = 0; r < rows.length; r++) {
      Arrays.fill(mask, r * longest, r * longest + tokens.get(rows[r]).length, 1f);
    }
    return scope.create(mask, new Shape(rows.length, longest));
  }

  private static int longest(int[] rows, List<int[]> tokens) {
    int longest = 1;
    for (int r : rows) {
      longest = Math.max(longest, tokens.get(r).length);
    }
    return longest;
  }

  /** Positions of {@code tokens}, shortest first (stable). */
  private static int[] byLength(List<int[]> tokens) {
    Integer[] order = new Integer[tokens.size()];
    Arrays.setAll(order, i -> i);
    Arrays.sort(order, Comparator.comparingInt(i -> tokens.get(i).length));
    return Arrays.stream(order).mapToInt(Integer::intValue).toArray();
  }

  private static int[] identity(int n) {
    int[] rows = new int[n];
    Arrays.setAll(rows, i -> i);
    return rows;
  }

  private static long[] toLong(int[] rows) {
    return Arrays.stream(rows).asLongStream().toArray();
  }
}
