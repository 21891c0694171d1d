package io.dynnibal.model.transformer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The safetensors format: the 8-byte little-endian length of a JSON header naming each tensor's
 * dtype, shape and byte range, then the little-endian data. Floating-point tensors of 32, 16 (IEEE
 * half) and bfloat16 bits read as float32, exactly; integer buffers (such as {@code position_ids})
 * are skipped. Writes float32 or half precision.
 */
public final class Safetensors {
  /** The precision a file is written in. */
  public enum Precision {
    F32(4),
    F16(2);

    final int bytes;

    Precision(int bytes) {
      this.bytes = bytes;
    }
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  private Safetensors() {}

  /**
   * The floating-point tensors of {@code file} as float32, under their names in the file with a
   * leading {@code bert.} dropped and TensorFlow-era {@code LayerNorm.gamma/beta} renamed to {@code
   * weight/bias}, as {@link BertCheckpoint} names them.
   */
  public static Map<String, BertCheckpoint.Tensor> read(Path file) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      ByteBuffer length = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
      channel.read(length, 0);
      long headerLength = length.getLong(0);
      if (headerLength <= 0 || headerLength > 100_000_000 || headerLength + 8 > channel.size()) {
        throw new IllegalArgumentException(file + " is not a safetensors file");
      }
      ByteBuffer header = ByteBuffer.allocate((int) headerLength);
      channel.read(header, 8);
      JsonNode entries = JSON.readTree(header.array());
      long dataStart = 8 + headerLength;
      Map<String, BertCheckpoint.Tensor> tensors = new LinkedHashMap<>();
      for (Iterator<Map.Entry<String, JsonNode>> it = entries.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        if (e.getKey().equals("__metadata__")) {
          continue;
        }
        JsonNode entry = e.getValue();
        String dtype = entry.path("dtype").asText();
        int width =
            switch (dtype) {
              case "F32" -> 4;
              case "F16", "BF16" -> 2;
              default -> 0;
            };
        if (width == 0) {
          if (dtype.startsWith("F")) {
            throw new IllegalArgumentException(
                file
                    + ": tensor "
                    + e.getKey()
                    + " is "
                    + dtype
                    + "; float32, float16 and bfloat16 checkpoints load");
          }
          continue; // integer buffers such as position_ids
        }
        long[] shape = new long[entry.path("shape").size()];
        for (int i = 0; i < shape.length; i++) {
          shape[i] = entry.path("shape").get(i).asLong();
        }
        long from = entry.path("data_offsets").get(0).asLong();
        long to = entry.path("data_offsets").get(1).asLong();
        ByteBuffer data = ByteBuffer.allocate((int) (to - from)).order(ByteOrder.LITTLE_ENDIAN);
        channel.read(data, dataStart + from);
        data.flip();
        tensors.put(name(e.getKey()), new BertCheckpoint.Tensor(shape, floats(data, dtype)));
      }
      return tensors;
    }
  }

  private static float[] floats(ByteBuffer data, String dtype) {
    if (dtype.equals("F32")) {
      float[] values = new float[data.remaining() / Float.BYTES];
      data.asFloatBuffer().get(values);
      return values;
    }
    float[] values = new float[data.remaining() / 2];
    for (int i = 0; i < values.length; i++) {
      short bits = data.getShort();
      values[i] =
          dtype.equals("F16")
              ? HalfFloats.toFloat(bits)
              : Float.intBitsToFloat((bits & 0xffff) << 16); // bfloat16: float32's top half
    }
    return values;
  }

  private static String name(String stored) {
    String name = stored.startsWith("bert.") ? stored.substring(5) : stored;
    return name.replace("LayerNorm.gamma", "LayerNorm.weight")
        .replace("LayerNorm.beta", "LayerNorm.bias");
  }

  /** Writes {@code tensors} in header order; half precision rounds to nearest, ties to even. */
  public static void write(
      Path file, Map<String, BertCheckpoint.Tensor> tensors, Precision precision)
      throws IOException {
    ObjectNode header = JSON.createObjectNode();
    header.putObject("__metadata__").put("format", "pt");
    long offset = 0;
    for (Map.Entry<String, BertCheckpoint.Tensor> e : tensors.entrySet()) {
      ObjectNode entry = header.putObject(e.getKey());
      entry.put("dtype", precision.name());
      ArrayNode shape = entry.putArray("shape");
      for (long d : e.getValue().shape()) {
        shape.add(d);
      }
      long bytes = (long) e.getValue().values().length * precision.bytes;
      entry.putArray("data_offsets").add(offset).add(offset + bytes);
      offset += bytes;
    }
    byte[] json = JSON.writeValueAsBytes(header);
    // The header is padded with spaces to a multiple of 8 bytes, as the reference writer does.
    int padded = (json.length + 7) / 8 * 8;
    ByteBuffer head = ByteBuffer.allocate(8 + padded).order(ByteOrder.LITTLE_ENDIAN);
    head.putLong(padded).put(json);
    while (head.hasRemaining()) {
      head.put((byte) ' ');
    }
    head.flip();
    try (FileChannel out =
        FileChannel.open(
            file,
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE)) {
      out.write(head);
      for (BertCheckpoint.Tensor t : tensors.values()) {
        float[] values = t.values();
        ByteBuffer data =
            ByteBuffer.allocate(values.length * precision.bytes).order(ByteOrder.LITTLE_ENDIAN);
        if (precision == Precision.F32) {
          data.asFloatBuffer().put(values);
        } else {
          for (float v : values) {
            data.putShort(HalfFloats.fromFloat(v));
          }
          data.flip();
        }
        out.write(data);
      }
    }
  }
}
