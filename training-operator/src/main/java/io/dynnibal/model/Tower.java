package io.dynnibal.model;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.ParallelBlock;
import ai.djl.nn.Parameter;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.ParameterStore;
import ai.djl.util.Pair;
import io.dynnibal.model.features.Features;
import io.dynnibal.model.graph.GraphScalars;
import io.dynnibal.model.transformer.BertEncoderBlock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * One encoder over a text's hashed features, of one {@link TowerKind}:
 *
 * <ul>
 *   <li>{@link TowerKind#BAG}: the features' embeddings pooled as a weighted bag from a {@link
 *       SparseEmbeddingTable}, then a DJL network {@code Linear -> GELU -> Linear} plus a linear
 *       skip path (which keeps the bag's lexical overlap from the first step: an untrained tower
 *       already ranks by shared words);
 *   <li>{@link TowerKind#SET_TRANSFORMER}: the {@code maxTokens} strongest features as a set of
 *       tokens through one self-attention layer ({@link SetTransformerBlock}), mean-pooled, then
 *       linear;
 *   <li>{@link TowerKind#TRANSFORMER}: the text's WordPiece tokens, in order, looked up in the
 *       table (the checkpoint's word embeddings) and run through a pretrained BERT encoder ({@link
 *       BertEncoderBlock}), masked-mean-pooled.
 * </ul>
 *
 * Both end in unit L2 norm. The table lives on the JVM heap; the network on the training device.
 */
public final class Tower implements AutoCloseable {
  /**
   * Inference batches: large enough to keep the device busy, small enough to bound native memory. A
   * transformer's batches are smaller: DJL keeps every layer's activations until the batch's scope
   * closes, which for a large batch through a transformer is many gigabytes, and small batches stay
   * in cache.
   */
  private static final int ENCODE_BATCH = 1024;

  private static final int TRANSFORMER_ENCODE_BATCH = 32;

  private final SparseEmbeddingTable table;
  private final Block body;
  private final ParameterStore store;
  private final NDManager manager;

  private final TowerKind kind;
  private final int maxTokens;

  /** {@link DualEncoderConfig#trainableLayers()}: 0 trains everything, the table included. */
  private final int trainableLayers;

  /** A transformer's way through a batch; null for the other kinds. */
  private final TransformerForward transformer;

  /** Whether the weights changed since the transformer last found its frozen-prefix cache. */
  private boolean cacheStale = true;

  Tower(SparseEmbeddingTable table, DualEncoderConfig config, NDManager manager) {
    this.table = table;
    this.manager = manager;
    this.kind = config.towerKind();
    // One tower may read both sides; a transformer's tokenizer already bounds each side's length.
    this.maxTokens = Math.max(config.maxTokens(), config.queryMaxTokens());
    this.trainableLayers = config.trainableLayers();
    if (kind == TowerKind.TRANSFORMER) {
      BertEncoderBlock bert = new BertEncoderBlock(config.bert(), config.outputDim());
      this.body = bert;
      body.initialize(manager, DataType.FLOAT32, new Shape(1, 2, table.dim()), new Shape(1, 2));
      this.transformer =
          new TransformerForward(bert, table, maxTokens, trainableLayers, config.fastPath());
      markTrainable();
      this.store = new ParameterStore(manager, false);
      return;
    }
    this.transformer = null;
    if (kind == TowerKind.SET_TRANSFORMER) {
      this.body = new SetTransformerBlock(table.dim(), config.hiddenDim(), config.outputDim());
      body.initialize(
          manager, DataType.FLOAT32, new Shape(1, maxTokens, table.dim()), new Shape(1, maxTokens));
      markTrainable();
      this.store = new ParameterStore(manager, false);
      return;
    }
    Block mlp =
        new SequentialBlock()
            .add(Linear.builder().setUnits(config.hiddenDim()).build())
            .add(Activation::gelu)
            .add(Linear.builder().setUnits(config.outputDim()).build());
    Block linear = Linear.builder().setUnits(config.outputDim()).optBias(false).build();
    this.body =
        new ParallelBlock(
            outputs ->
                new NDList(
                    outputs.get(0).singletonOrThrow().add(outputs.get(1).singletonOrThrow())),
            List.of(mlp, linear));
    body.initialize(manager, DataType.FLOAT32, new Shape(1, table.dim()));
    markTrainable();
    this.store = new ParameterStore(manager, false);
  }

  public SparseEmbeddingTable table() {
    return table;
  }

  public Block body() {
    return body;
  }

  /** The network's parameters in a stable order (the order of {@link Block#getParameters}). */
  public List<Parameter> parameters() {
    List<Parameter> parameters = new ArrayList<>();
    for (Pair<String, Parameter> p : body.getParameters()) {
      parameters.add(p.getValue());
    }
    return parameters;
  }

  /**
   * The parameters the optimiser steps: all of them, or a transformer's top {@link
   * DualEncoderConfig#trainableLayers()} layers and projection.
   */
  public List<Parameter> trainableParameters() {
    return kind == TowerKind.TRANSFORMER
        ? ((BertEncoderBlock) body).trainableParameters(trainableLayers)
        : parameters();
  }

  /** Whether the embedding table trains (not when a transformer's bottom layers are frozen). */
  public boolean tableTrains() {
    return trainableLayers == 0;
  }

  /**
   * Sets which parameters record gradients (after initialising or loading them): the trainable ones
   * only, so libtorch builds no backward graph through frozen layers. A transformer then finds the
   * frozen-prefix cache of its frozen weights as they now are (on its next forward pass).
   */
  public void markTrainable() {
    cacheStale = true;
    java.util.Set<Parameter> trainable =
        java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    trainable.addAll(trainableParameters());
    for (Parameter p : parameters()) {
      p.getArray().setRequiresGradient(trainable.contains(p));
    }
  }

  /**
   * Unit-norm embeddings of many texts, without gradients; row i belongs to {@code batch.get(i)}.
   */
  public float[][] encode(List<Features> batch) {
    return encode(batch, 1);
  }

  /**
   * The same on {@code threads} threads, each running one libtorch op at a time (the runtime's
   * intra-op setting), for callers that own that many idle cores: evaluation after training, not a
   * Flink task. A transformer's texts go through in order of length, so that each chunk pads to
   * little more than its own texts (a chunk pads to its longest).
   */
  public float[][] encode(List<Features> batch, int threads) {
    int chunkSize = kind == TowerKind.TRANSFORMER ? TRANSFORMER_ENCODE_BATCH : ENCODE_BATCH;
    int[] order = encodeOrder(batch);
    float[][] out = new float[batch.size()][];
    frozenPrefixCache(); // found once, before the threads read it
    ParallelChunks.run(
        batch.size(), chunkSize, threads, (from, to) -> encodeChunk(batch, order, from, to, out));
    return out;
  }

  /** Positions of {@code batch} in encoding order: by token count for a transformer, else as is. */
  private int[] encodeOrder(List<Features> batch) {
    Integer[] order = new Integer[batch.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    if (kind == TowerKind.TRANSFORMER) {
      Arrays.sort(order, Comparator.comparingInt(i -> Math.min(batch.get(i).size(), maxTokens)));
    }
    int[] out = new int[order.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = order[i];
    }
    return out;
  }

  private void encodeChunk(List<Features> batch, int[] order, int from, int to, float[][] out) {
    List<Features> chunk = new ArrayList<>(to - from);
    for (int i = from; i < to; i++) {
      chunk.add(batch.get(order[i]));
    }
    try (NDManager scope = manager.newSubManager()) {
      NDArray encoded = forward(chunk, input(chunk, scope), false, scope);
      int outDim = (int) encoded.getShape().get(1);
      float[] flat = encoded.toFloatArray();
      for (int i = 0; i < chunk.size(); i++) {
        float[] row = new float[outDim];
        System.arraycopy(flat, i * outDim, row, 0, outDim);
        out[order[from + i]] = row;
      }
    }
  }

  /**
   * The forward pass of a training step: the pooled input (a leaf that records its gradient, for
   * {@link #backpropagateToTable}) and the unit-norm output. Arrays are attached to {@code scope}.
   */
  public Forward forwardForTraining(List<Features> batch, NDManager scope) {
    NDList input = input(batch, scope);
    if (tableTrains()) {
      input.get(0).setRequiresGradient(true);
    }
    return new Forward(
        batch, input.isEmpty() ? null : input.get(0), forward(batch, input, true, scope));
  }

  /**
   * Scatters the gradient that reached the pooled input of {@code forward} into the table's pending
   * gradients.
   */
  public void backpropagateToTable(Forward forward) {
    if (!tableTrains()) {
      return;
    }
    float[] gradient = forward.input().getGradient().toFloatArray();
    int dim = table.dim();
    List<Features> batch = forward.batch();
    int length = kind == TowerKind.BAG ? 0 : (int) forward.input().getShape().get(1);
    for (int i = 0; i < batch.size(); i++) {
      if (kind == TowerKind.BAG) {
        table.accumulateGradient(batch.get(i), gradient, i * dim);
      } else {
        int[] tokens = tokens(batch.get(i));
        for (int t = 0; t < tokens.length; t++) {
          table.accumulateGradient(
              new Features(new int[] {tokens[t]}, new float[] {1f}),
              gradient,
              (i * length + t) * dim);
        }
      }
    }
  }

  /**
   * What the network reads: pooled bags, or token sets with their mask; nothing for a transformer
   * that reads its frozen-prefix cache (the cache holds what the word embeddings would give).
   */
  private NDList input(List<Features> batch, NDManager scope) {
    if (kind == TowerKind.TRANSFORMER && frozenPrefixCache() != null) {
      return new NDList();
    }
    return kind == TowerKind.BAG ? new NDList(pooled(batch, scope)) : tokenSets(batch, scope);
  }

  /** The cache a transformer with frozen layers reads, or null (other kinds, no budget). */
  public io.dynnibal.model.transformer.FrozenPrefixCache frozenPrefixCache() {
    if (transformer == null) {
      return null;
    }
    if (cacheStale) {
      transformer.refreshCache();
      cacheStale = false;
    }
    return transformer.cache();
  }

  /**
   * B x T x E token embeddings (the strongest T features of each text, or a transformer's tokens in
   * order; zero-padded) and the B x T mask. A transformer's T is the batch's longest text: padding
   * costs attention, and queries are short.
   */
  private NDList tokenSets(List<Features> batch, NDManager scope) {
    int dim = table.dim();
    int maxTokens = this.maxTokens;
    if (kind == TowerKind.TRANSFORMER) {
      maxTokens = 1;
      for (Features f : batch) {
        maxTokens = Math.max(maxTokens, Math.min(f.size(), this.maxTokens));
      }
    }
    float[] x = new float[batch.size() * maxTokens * dim];
    float[] mask = new float[batch.size() * maxTokens];
    for (int i = 0; i < batch.size(); i++) {
      int[] tokens = tokens(batch.get(i));
      for (int t = 0; t < tokens.length; t++) {
        table.pool(
            new Features(new int[] {tokens[t]}, new float[] {1f}), x, (i * maxTokens + t) * dim);
        mask[i * maxTokens + t] = 1f;
      }
    }
    return new NDList(
        scope.create(x, new Shape(batch.size(), maxTokens, dim)),
        scope.create(mask, new Shape(batch.size(), maxTokens)));
  }

  /**
   * The ids of the {@code maxTokens} highest-weighted features, ties to the smaller id
   * (deterministic); a transformer's first {@code maxTokens} tokens.
   */
  private int[] tokens(Features features) {
    int n = features.size();
    if (transformer != null) {
      return transformer.tokens(features);
    }
    if (n <= maxTokens) {
      return features.ids();
    }
    Integer[] order = new Integer[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    float[] w = features.weights();
    java.util.Arrays.sort(
        order, (a, b) -> w[a] != w[b] ? Float.compare(w[b], w[a]) : Integer.compare(a, b));
    int[] ids = new int[maxTokens];
    for (int t = 0; t < maxTokens; t++) {
      ids[t] = features.ids()[order[t]];
    }
    return ids;
  }

  private NDArray pooled(List<Features> batch, NDManager scope) {
    int dim = table.dim();
    float[] pooled = new float[batch.size() * dim];
    for (int i = 0; i < batch.size(); i++) {
      table.pool(batch.get(i), pooled, i * dim);
    }
    return scope.create(pooled, new Shape(batch.size(), dim));
  }

  private NDArray forward(List<Features> batch, NDList input, boolean training, NDManager scope) {
    NDArray out =
        transformer != null
            ? transformer.forward(
                batch, input.isEmpty() ? null : input.get(0), store, scope, training)
            : body.forward(store, input, training).singletonOrThrow();
    // The floor only matters for a degenerate all-zero output; it keeps the division finite.
    NDArray norm = GraphScalars.atLeast(out.norm(new int[] {1}, true), 1e-12f);
    return out.div(norm);
  }

  @Override
  public void close() {
    for (Parameter p : parameters()) {
      p.close();
    }
  }

  /** What a training forward pass leaves for the backward pass. */
  public record Forward(List<Features> batch, NDArray input, NDArray output) {}
}
