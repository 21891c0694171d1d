package io.dynnibal.model.transformer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The float weights of an ONNX export of a BERT-family encoder, under the Hugging Face names and
 * layouts ({@code encoder.layer.0.attention.self.query.weight}, {@code out x in}).
 *
 * <p>Exporters keep the names of biases, embeddings and layer norms but give the weight of every
 * linear layer an anonymous name ({@code onnx::MatMul_787}) and store it transposed ({@code in x
 * out}) for a {@code MatMul}. The graph says whose it is: the {@code MatMul} that reads it feeds an
 * {@code Add} with a named bias, so the weight takes the bias's name with {@code .weight} and is
 * transposed back.
 */
final class OnnxInitializers {
  // onnx.proto field numbers.
  private static final int MODEL_GRAPH = 7;
  private static final int GRAPH_NODE = 1;
  private static final int GRAPH_INITIALIZER = 5;
  private static final int NODE_INPUT = 1;
  private static final int NODE_OUTPUT = 2;
  private static final int NODE_OP_TYPE = 4;
  private static final int TENSOR_DIMS = 1;
  private static final int TENSOR_DATA_TYPE = 2;
  private static final int TENSOR_FLOAT_DATA = 4;
  private static final int TENSOR_NAME = 8;
  private static final int TENSOR_RAW_DATA = 9;
  private static final int TENSOR_DATA_LOCATION = 14;
  private static final int FLOAT = 1;

  private OnnxInitializers() {}

  /** The named float tensors of the model in {@code onnx}. */
  static Map<String, BertCheckpoint.Tensor> read(ByteBuffer onnx) {
    Map<String, BertCheckpoint.Tensor> initializers = new LinkedHashMap<>();
    List<Node> nodes = new ArrayList<>();
    Protobuf model = new Protobuf(onnx, 0, onnx.limit());
    boolean sawGraph = false;
    while (model.next()) {
      if (model.number != MODEL_GRAPH || model.wireType != Protobuf.LENGTH_DELIMITED) {
        continue;
      }
      sawGraph = true;
      Protobuf graph = model.message();
      while (graph.next()) {
        if (graph.number == GRAPH_INITIALIZER) {
          readTensor(graph.message(), initializers);
        } else if (graph.number == GRAPH_NODE) {
          nodes.add(readNode(graph.message()));
        }
      }
    }
    if (!sawGraph) {
      throw new IllegalArgumentException("not an ONNX model: no graph");
    }
    return renameLinearWeights(initializers, nodes);
  }

  private record Node(String opType, List<String> inputs, List<String> outputs) {}

  private static Node readNode(Protobuf node) {
    String op = "";
    List<String> inputs = new ArrayList<>();
    List<String> outputs = new ArrayList<>();
    while (node.next()) {
      switch (node.number) {
        case NODE_INPUT -> inputs.add(node.string());
        case NODE_OUTPUT -> outputs.add(node.string());
        case NODE_OP_TYPE -> op = node.string();
        default -> {}
      }
    }
    return new Node(op, inputs, outputs);
  }

  private static void readTensor(Protobuf tensor, Map<String, BertCheckpoint.Tensor> into) {
    List<Long> dims = new ArrayList<>();
    int dataType = 0;
    String name = null;
    ByteBuffer raw = null;
    float[] floats = null;
    while (tensor.next()) {
      switch (tensor.number) {
        case TENSOR_DIMS -> {
          if (tensor.wireType == Protobuf.VARINT) {
            dims.add(tensor.varint);
          } else {
            for (long d : tensor.packedVarints()) {
              dims.add(d);
            }
          }
        }
        case TENSOR_DATA_TYPE -> dataType = (int) tensor.varint;
        case TENSOR_NAME -> name = tensor.string();
        case TENSOR_RAW_DATA -> raw = tensor.sliceBuffer();
        case TENSOR_FLOAT_DATA -> floats = littleEndianFloats(tensor.sliceBuffer());
        case TENSOR_DATA_LOCATION -> {
          if (tensor.varint == 1) {
            throw new IllegalArgumentException(
                "tensor "
                    + name
                    + " is stored outside the .onnx file; use a self-contained export");
          }
        }
        default -> {}
      }
    }
    if (dataType != FLOAT || name == null) {
      return; // position ids (int64) and graph constants: not weights
    }
    long[] shape = dims.stream().mapToLong(Long::longValue).toArray();
    float[] values = raw != null ? littleEndianFloats(raw) : floats;
    into.put(name, new BertCheckpoint.Tensor(shape, values == null ? new float[0] : values));
  }

  private static float[] littleEndianFloats(ByteBuffer bytes) {
    float[] values = new float[bytes.remaining() / Float.BYTES];
    bytes.order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(values);
    return values;
  }

  private static Map<String, BertCheckpoint.Tensor> renameLinearWeights(
      Map<String, BertCheckpoint.Tensor> initializers, List<Node> nodes) {
    Map<String, Node> addByInput = new HashMap<>();
    for (Node node : nodes) {
      if (node.opType.equals("Add")) {
        for (String input : node.inputs) {
          addByInput.put(input, node);
        }
      }
    }
    Map<String, BertCheckpoint.Tensor> named = new LinkedHashMap<>();
    Map<String, String> renamed = new HashMap<>();
    for (Node node : nodes) {
      if (!node.opType.equals("MatMul") || node.inputs.size() != 2 || node.outputs.isEmpty()) {
        continue;
      }
      String weight = node.inputs.get(1);
      BertCheckpoint.Tensor w = initializers.get(weight);
      Node add = addByInput.get(node.outputs.get(0));
      if (w == null || w.shape().length != 2 || add == null) {
        continue;
      }
      for (String other : add.inputs) {
        if (other.endsWith(".bias") && initializers.containsKey(other)) {
          String hfName = other.substring(0, other.length() - ".bias".length()) + ".weight";
          named.put(hfName, w.transposed());
          renamed.put(weight, hfName);
        }
      }
    }
    Map<String, BertCheckpoint.Tensor> all = new LinkedHashMap<>();
    initializers.forEach(
        (name, tensor) -> {
          if (!renamed.containsKey(name)) {
            all.put(name, tensor);
          }
        });
    all.putAll(named);
    return all;
  }
}
