package io.dynnibal.model.transformer;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.AbstractBlock;
import ai.djl.nn.Activation;
import ai.djl.nn.Parameter;
import ai.djl.nn.core.Linear;
import ai.djl.nn.norm.LayerNorm;
import ai.djl.training.ParameterStore;
import ai.djl.util.PairList;
import io.dynnibal.model.graph.GraphScalars;
import java.util.ArrayList;
import java.util.List;

/**
 * A BERT encoder after the word-embedding lookup: input {@code (x: B x T x H word embeddings, mask:
 * B x T of 1/0)}, then position and token-type embeddings, layer norm, the transformer layers
 * (multi-head self-attention and a GELU feed-forward, each residual and layer-normed, post-norm as
 * BERT), masked mean pooling over the real tokens, and a linear projection when the output width is
 * not the encoder's. Output {@code B x out}, not normalised.
 *
 * <p>The word embeddings are not here: they live in the tower's sparse embedding table, so a step
 * updates only the rows of the tokens it saw.
 */
public final class BertEncoderBlock extends AbstractBlock {
  private final BertShape shape;
  private final int outputDim;
  private final Parameter positions;
  private final Parameter tokenTypes;
  private final LayerNorm embeddingNorm;
  private final List<Layer> layers = new ArrayList<>();
  private final Linear projection;

  public BertEncoderBlock(BertShape shape, int outputDim) {
    this.shape = shape;
    this.outputDim = outputDim;
    positions =
        addParameter(
            Parameter.builder()
                .setName("positions")
                .setType(Parameter.Type.WEIGHT)
                .optShape(new Shape(shape.maxPositions(), shape.hidden()))
                .build());
    tokenTypes =
        addParameter(
            Parameter.builder()
                .setName("tokenTypes")
                .setType(Parameter.Type.WEIGHT)
                .optShape(new Shape(1, shape.hidden()))
                .build());
    embeddingNorm = addChildBlock("embeddingNorm", norm(shape));
    for (int l = 0; l < shape.layers(); l++) {
      layers.add(addChildBlock("layer" + l, new Layer(shape)));
    }
    projection =
        outputDim == shape.hidden()
            ? null
            : addChildBlock("projection", Linear.builder().setUnits(outputDim).build());
  }

  private static LayerNorm norm(BertShape shape) {
    return LayerNorm.builder().axis(2).optEpsilon(shape.layerNormEpsilon()).build();
  }

  /** Whether a linear projection (initialised from the seed) follows the pooling. */
  public boolean hasProjection() {
    return projection != null;
  }

  /**
   * Copies the checkpoint's weights into the initialised block (the projection, if any, keeps its
   * random initialisation).
   */
  public void load(BertCheckpoint checkpoint) {
    if (!checkpoint.shape().equals(shape)) {
      throw new IllegalArgumentException(
          "checkpoint "
              + checkpoint.source()
              + " has shape "
              + checkpoint.shape()
              + ", not "
              + shape);
    }
    set(positions, checkpoint.weight("embeddings.position_embeddings.weight").values());
    float[] types = checkpoint.weight("embeddings.token_type_embeddings.weight").values();
    set(tokenTypes, java.util.Arrays.copyOf(types, shape.hidden())); // type 0: single-segment input
    setNorm(embeddingNorm, checkpoint, "embeddings.LayerNorm");
    for (int l = 0; l < layers.size(); l++) {
      layers.get(l).load(checkpoint, "encoder.layer." + l + ".");
    }
    if (projection != null && checkpoint.weights().containsKey(PROJECTION + ".weight")) {
      setLinear(projection, checkpoint, PROJECTION);
    }
  }

  /** The projection's name among a checkpoint's weights (a sentence-transformers Dense module). */
  public static final String PROJECTION = "projection";

  /**
   * The block's weights under the Hugging Face names that {@link #load} reads (the projection, if
   * any, as {@value #PROJECTION}), as they are now; the word embeddings are the tower's table.
   */
  public java.util.Map<String, BertCheckpoint.Tensor> weights() {
    java.util.Map<String, BertCheckpoint.Tensor> out = new java.util.LinkedHashMap<>();
    put(out, "embeddings.position_embeddings.weight", positions);
    put(out, "embeddings.token_type_embeddings.weight", tokenTypes);
    putNorm(out, "embeddings.LayerNorm", embeddingNorm);
    for (int l = 0; l < layers.size(); l++) {
      layers.get(l).weights(out, "encoder.layer." + l + ".");
    }
    if (projection != null) {
      putLinear(out, PROJECTION, projection);
    }
    return out;
  }

  private static void put(
      java.util.Map<String, BertCheckpoint.Tensor> out, String name, Parameter p) {
    out.put(
        name,
        new BertCheckpoint.Tensor(p.getArray().getShape().getShape(), p.getArray().toFloatArray()));
  }

  private static void putLinear(
      java.util.Map<String, BertCheckpoint.Tensor> out, String prefix, Linear linear) {
    put(out, prefix + ".weight", linear.getParameters().get("weight"));
    put(out, prefix + ".bias", linear.getParameters().get("bias"));
  }

  private static void putNorm(
      java.util.Map<String, BertCheckpoint.Tensor> out, String prefix, LayerNorm norm) {
    put(out, prefix + ".weight", norm.getParameters().get("gamma"));
    put(out, prefix + ".bias", norm.getParameters().get("beta"));
  }

  /**
   * The parameters that fine-tune when the top {@code topLayers} layers do (0: all of them): those
   * layers' and the projection's. Below them nothing trains, so a backward pass stops at the lowest
   * trainable layer.
   */
  public List<Parameter> trainableParameters(int topLayers) {
    List<Parameter> out = new ArrayList<>();
    if (topLayers == 0) {
      getParameters().forEach(p -> out.add(p.getValue()));
      return out;
    }
    for (Layer layer : layers.subList(layers.size() - topLayers, layers.size())) {
      layer.getParameters().forEach(p -> out.add(p.getValue()));
    }
    if (projection != null) {
      projection.getParameters().forEach(p -> out.add(p.getValue()));
    }
    return out;
  }

  private static void set(Parameter parameter, float[] values) {
    parameter.getArray().set(values);
  }

  private static void setLinear(Linear linear, BertCheckpoint checkpoint, String prefix) {
    set(linear.getParameters().get("weight"), checkpoint.weight(prefix + ".weight").values());
    set(linear.getParameters().get("bias"), checkpoint.weight(prefix + ".bias").values());
  }

  private static void setNorm(LayerNorm norm, BertCheckpoint checkpoint, String prefix) {
    set(norm.getParameters().get("gamma"), checkpoint.weight(prefix + ".weight").values());
    set(norm.getParameters().get("beta"), checkpoint.weight(prefix + ".bias").values());
  }

  @Override
  protected NDList forwardInternal(
      ParameterStore store, NDList inputs, boolean training, PairList<String, Object> params) {
    NDArray mask = inputs.get(1);
    NDArray h = prefix(store, inputs.get(0), mask, 0, training);
    return new NDList(suffix(store, h, mask, 0, training));
  }

  /** The encoder's transformer layers. */
  public int layerCount() {
    return layers.size();
  }

  /**
   * The encoder's first part: word embeddings {@code x} (B x T x H) plus position and token-type
   * embeddings, layer-normed, then layers {@code [0, layerCount)}: B x T x H hidden states. A real
   * token's state depends only on its own text's tokens, never on padding (padding keys get a bias
   * of -10000 before the softmax, whose exponent is 0 in single precision), so a text's states are
   * the same whatever batch it was padded into.
   */
  public NDArray prefix(
      ParameterStore store, NDArray x, NDArray mask, int layerCount, boolean training) {
    long tokens = x.getShape().get(1);
    if (tokens > shape.maxPositions()) {
      throw new IllegalArgumentException(
          tokens + " tokens; the encoder has position embeddings for " + shape.maxPositions());
    }
    NDArray position =
        store.getValue(positions, x.getDevice(), training).get(new NDIndex(":{}", tokens));
    NDArray type = store.getValue(tokenTypes, x.getDevice(), training);
    NDArray h =
        embeddingNorm
            .forward(store, new NDList(x.add(position).add(type)), training)
            .singletonOrThrow();
    return layers(store, h, mask, 0, layerCount, training);
  }

  /**
   * The encoder's rest: layers {@code [fromLayer, layers)} over hidden states {@code h} (B x T x H,
   * as {@link #prefix} left them), masked mean pooling over the real tokens and the projection: B x
   * out.
   */
  public NDArray suffix(
      ParameterStore store, NDArray h, NDArray mask, int fromLayer, boolean training) {
    h = layers(store, h, mask, fromLayer, layers.size(), training);
    NDArray weights = mask.expandDims(2);
    NDArray pooled = h.mul(weights).sum(new int[] {1}).div(weights.sum(new int[] {1}).maximum(1f));
    return projection == null
        ? pooled
        : projection.forward(store, new NDList(pooled), training).singletonOrThrow();
  }

  private NDArray layers(
      ParameterStore store, NDArray h, NDArray mask, int from, int to, boolean training) {
    // Padding keys get -10000 before the softmax, as BERT does: no token attends to them.
    NDArray keyBias = mask.sub(1f).mul(10000f).expandDims(1).expandDims(1);
    for (Layer layer : layers.subList(from, to)) {
      h = layer.forward(store, h, keyBias, training);
    }
    return h;
  }

  /**
   * The parameters {@link #prefix} over {@code layerCount} layers reads: the position and
   * token-type embeddings, the embedding norm and those layers' (the word embeddings are the
   * tower's table).
   */
  public List<Parameter> prefixParameters(int layerCount) {
    List<Parameter> out = new ArrayList<>(List.of(positions, tokenTypes));
    embeddingNorm.getParameters().forEach(p -> out.add(p.getValue()));
    for (Layer layer : layers.subList(0, layerCount)) {
      layer.getParameters().forEach(p -> out.add(p.getValue()));
    }
    return out;
  }

  @Override
  public Shape[] getOutputShapes(Shape[] inputShapes) {
    return new Shape[] {new Shape(inputShapes[0].get(0), outputDim)};
  }

  @Override
  protected void initializeChildBlocks(NDManager manager, DataType dataType, Shape... inputShapes) {
    Shape tokens = inputShapes[0];
    embeddingNorm.initialize(manager, dataType, tokens);
    for (Layer layer : layers) {
      layer.initialize(manager, dataType, tokens);
    }
    if (projection != null) {
      projection.initialize(manager, dataType, new Shape(tokens.get(0), shape.hidden()));
    }
  }

  /** One post-norm transformer layer. */
  private static final class Layer extends AbstractBlock {
    private final int heads;
    private final int headDim;
    private final Linear query;
    private final Linear key;
    private final Linear value;
    private final Linear attentionOutput;
    private final LayerNorm attentionNorm;
    private final Linear intermediate;
    private final Linear output;
    private final LayerNorm outputNorm;

    Layer(BertShape shape) {
      heads = shape.heads();
      headDim = shape.hidden() / heads;
      int h = shape.hidden();
      query = addChildBlock("query", Linear.builder().setUnits(h).build());
      key = addChildBlock("key", Linear.builder().setUnits(h).build());
      value = addChildBlock("value", Linear.builder().setUnits(h).build());
      attentionOutput = addChildBlock("attentionOutput", Linear.builder().setUnits(h).build());
      attentionNorm = addChildBlock("attentionNorm", norm(shape));
      intermediate =
          addChildBlock("intermediate", Linear.builder().setUnits(shape.intermediate()).build());
      output = addChildBlock("output", Linear.builder().setUnits(h).build());
      outputNorm = addChildBlock("outputNorm", norm(shape));
    }

    void load(BertCheckpoint checkpoint, String prefix) {
      setLinear(query, checkpoint, prefix + "attention.self.query");
      setLinear(key, checkpoint, prefix + "attention.self.key");
      setLinear(value, checkpoint, prefix + "attention.self.value");
      setLinear(attentionOutput, checkpoint, prefix + "attention.output.dense");
      setNorm(attentionNorm, checkpoint, prefix + "attention.output.LayerNorm");
      setLinear(intermediate, checkpoint, prefix + "intermediate.dense");
      setLinear(output, checkpoint, prefix + "output.dense");
      setNorm(outputNorm, checkpoint, prefix + "output.LayerNorm");
    }

    void weights(java.util.Map<String, BertCheckpoint.Tensor> out, String prefix) {
      putLinear(out, prefix + "attention.self.query", query);
      putLinear(out, prefix + "attention.self.key", key);
      putLinear(out, prefix + "attention.self.value", value);
      putLinear(out, prefix + "attention.output.dense", attentionOutput);
      putNorm(out, prefix + "attention.output.LayerNorm", attentionNorm);
      putLinear(out, prefix + "intermediate.dense", intermediate);
      putLinear(out, prefix + "output.dense", output);
      putNorm(out, prefix + "output.LayerNorm", outputNorm);
    }

    NDArray forward(ParameterStore store, NDArray x, NDArray keyBias, boolean training) {
      NDArray q = heads(apply(query, store, x, training));
      NDArray k = heads(apply(key, store, x, training));
      NDArray v = heads(apply(value, store, x, training));
      NDArray scores =
          GraphScalars.dividedBy(q.matMul(k.transpose(0, 1, 3, 2)), (float) Math.sqrt(headDim))
              .add(keyBias);
      NDArray context = scores.softmax(3).matMul(v).transpose(0, 2, 1, 3);
      Shape s = x.getShape();
      context = context.reshape(s.get(0), s.get(1), s.get(2));
      NDArray a =
          apply(
              attentionNorm,
              store,
              x.add(apply(attentionOutput, store, context, training)),
              training);
      NDArray f =
          apply(output, store, Activation.gelu(apply(intermediate, store, a, training)), training);
      return apply(outputNorm, store, a.add(f), training);
    }

    /** B x T x H -> B x heads x T x headDim. */
    private NDArray heads(NDArray x) {
      Shape s = x.getShape();
      return x.reshape(s.get(0), s.get(1), heads, headDim).transpose(0, 2, 1, 3);
    }

    private static NDArray apply(
        AbstractBlock block, ParameterStore store, NDArray x, boolean training) {
      return block.forward(store, new NDList(x), training).singletonOrThrow();
    }

    @Override
    protected NDList forwardInternal(
        ParameterStore store, NDList inputs, boolean training, PairList<String, Object> params) {
      return new NDList(forward(store, inputs.get(0), inputs.get(1), training));
    }

    @Override
    public Shape[] getOutputShapes(Shape[] inputShapes) {
      return new Shape[] {inputShapes[0]};
    }

    @Override
    protected void initializeChildBlocks(
        NDManager manager, DataType dataType, Shape... inputShapes) {
      Shape tokens = inputShapes[0];
      for (Linear l : new Linear[] {query, key, value, attentionOutput, intermediate}) {
        l.initialize(manager, dataType, tokens);
      }
      output.initialize(
          manager,
          dataType,
          new Shape(
              tokens.get(0),
              tokens.get(1),
              intermediate.getOutputShapes(new Shape[] {tokens})[0].get(2)));
      attentionNorm.initialize(manager, dataType, tokens);
      outputNorm.initialize(manager, dataType, tokens);
    }
  }
}
