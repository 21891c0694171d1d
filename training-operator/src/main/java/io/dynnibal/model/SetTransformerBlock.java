package io.dynnibal.model;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.AbstractBlock;
import ai.djl.nn.Activation;
import ai.djl.nn.core.Linear;
import ai.djl.nn.norm.LayerNorm;
import ai.djl.training.ParameterStore;
import ai.djl.util.PairList;
import io.dynnibal.model.graph.GraphScalars;

/**
 * A small transformer over a text's strongest hashed features: one encoder layer (single-head
 * self-attention and a GELU feed-forward, each with a residual connection and layer norm), masked
 * mean pooling, and a linear output. Input {@code (x: B x T x E, mask: B x T of 1/0)}; output
 * {@code B x out}.
 *
 * <p>The features are a set, not a sequence (no positions): word order reaches the model through
 * the bigram and compound features, and attention learns which features of a text matter together -
 * what a bag cannot.
 */
final class SetTransformerBlock extends AbstractBlock {
  private final int width;
  private final Linear query;
  private final Linear key;
  private final Linear value;
  private final Linear mix;
  private final LayerNorm attentionNorm;
  private final Linear expand;
  private final Linear contract;
  private final LayerNorm feedForwardNorm;
  private final Linear output;

  SetTransformerBlock(int width, int hidden, int outputDim) {
    this.width = width;
    query = addChildBlock("query", Linear.builder().setUnits(width).build());
    key = addChildBlock("key", Linear.builder().setUnits(width).build());
    value = addChildBlock("value", Linear.builder().setUnits(width).build());
    mix = addChildBlock("mix", Linear.builder().setUnits(width).build());
    attentionNorm = addChildBlock("attentionNorm", LayerNorm.builder().axis(2).build());
    expand = addChildBlock("expand", Linear.builder().setUnits(hidden).build());
    contract = addChildBlock("contract", Linear.builder().setUnits(width).build());
    feedForwardNorm = addChildBlock("feedForwardNorm", LayerNorm.builder().axis(2).build());
    output = addChildBlock("output", Linear.builder().setUnits(outputDim).build());
  }

  @Override
  protected NDList forwardInternal(
      ParameterStore store, NDList inputs, boolean training, PairList<String, Object> params) {
    NDArray x = inputs.get(0);
    NDArray mask = inputs.get(1);
    NDArray q = query.forward(store, new NDList(x), training).singletonOrThrow();
    NDArray k = key.forward(store, new NDList(x), training).singletonOrThrow();
    NDArray v = value.forward(store, new NDList(x), training).singletonOrThrow();
    // Padding positions get -1e9 before the softmax: no token attends to them.
    NDArray scores =
        GraphScalars.dividedBy(q.matMul(k.transpose(0, 2, 1)), (float) Math.sqrt(width))
            .add(mask.expandDims(1).sub(1f).mul(1e9f));
    NDArray attended = scores.softmax(2).matMul(v);
    NDArray h =
        attentionNorm
            .forward(
                store,
                new NDList(
                    x.add(mix.forward(store, new NDList(attended), training).singletonOrThrow())),
                training)
            .singletonOrThrow();
    NDArray ff =
        contract
            .forward(
                store,
                new NDList(
                    Activation.gelu(
                        expand.forward(store, new NDList(h), training).singletonOrThrow())),
                training)
            .singletonOrThrow();
    NDArray y = feedForwardNorm.forward(store, new NDList(h.add(ff)), training).singletonOrThrow();
    NDArray weights = mask.expandDims(2);
    NDArray pooled = y.mul(weights).sum(new int[] {1}).div(weights.sum(new int[] {1}).maximum(1f));
    return output.forward(store, new NDList(pooled), training);
  }

  @Override
  public Shape[] getOutputShapes(Shape[] inputShapes) {
    return new Shape[] {
      new Shape(
          inputShapes[0].get(0),
          output.getOutputShapes(new Shape[] {new Shape(1, width)})[0].get(1))
    };
  }

  @Override
  protected void initializeChildBlocks(NDManager manager, DataType dataType, Shape... inputShapes) {
    Shape tokens = inputShapes[0];
    for (Linear l : new Linear[] {query, key, value, mix, expand}) {
      l.initialize(manager, dataType, tokens);
    }
    Shape hidden =
        new Shape(
            tokens.get(0), tokens.get(1), expand.getOutputShapes(new Shape[] {tokens})[0].get(2));
    contract.initialize(manager, dataType, hidden);
    attentionNorm.initialize(manager, dataType, tokens);
    feedForwardNorm.initialize(manager, dataType, tokens);
    output.initialize(manager, dataType, new Shape(tokens.get(0), width));
  }
}
