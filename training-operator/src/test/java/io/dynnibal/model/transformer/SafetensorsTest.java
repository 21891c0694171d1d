package io.dynnibal.model.transformer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SafetensorsTest {
  @TempDir Path dir;

  private static BertCheckpoint.Tensor random(long rows, long columns, long seed) {
    Random random = new Random(seed);
    float[] values = new float[(int) (rows * columns)];
    for (int i = 0; i < values.length; i++) {
      values[i] = (float) (random.nextGaussian() * Math.pow(10, random.nextInt(5) - 3));
    }
    return new BertCheckpoint.Tensor(new long[] {rows, columns}, values);
  }

  @Test
  void float32RoundTripsExactly() throws Exception {
    Map<String, BertCheckpoint.Tensor> tensors = new LinkedHashMap<>();
    tensors.put("a.weight", random(3, 5, 1));
    tensors.put("b.bias", random(1, 7, 2));
    Path file = dir.resolve("f32.safetensors");
    Safetensors.write(file, tensors, Safetensors.Precision.F32);
    Map<String, BertCheckpoint.Tensor> read = Safetensors.read(file);
    assertEquals(tensors.keySet(), read.keySet());
    for (String name : tensors.keySet()) {
      assertArrayEquals(tensors.get(name).shape(), read.get(name).shape());
      assertArrayEquals(tensors.get(name).values(), read.get(name).values());
    }
  }

  @Test
  void halfPrecisionReadsBackAsTheNearestHalf() throws Exception {
    BertCheckpoint.Tensor t = random(11, 13, 3);
    Path file = dir.resolve("f16.safetensors");
    Safetensors.write(file, Map.of("w", t), Safetensors.Precision.F16);
    assertEquals(8 + headerLength(file) + 2L * t.values().length, Files.size(file));
    float[] read = Safetensors.read(file).get("w").values();
    for (int i = 0; i < read.length; i++) {
      assertEquals(HalfFloats.toFloat(HalfFloats.fromFloat(t.values()[i])), read[i]);
    }
  }

  @Test
  void bfloat16ReadsAsTheTopHalfOfAFloat() throws Exception {
    float[] values = {1f, -2.5f, 3.140625f, 0f};
    String header = "{\"x\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8]}}";
    byte[] json = header.getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = ByteBuffer.allocate(8 + json.length + 8).order(ByteOrder.LITTLE_ENDIAN);
    b.putLong(json.length).put(json);
    for (float v : values) {
      b.putShort((short) (Float.floatToRawIntBits(v) >>> 16));
    }
    Path file = dir.resolve("bf16.safetensors");
    Files.write(file, b.array());
    assertArrayEquals(values, Safetensors.read(file).get("x").values());
  }

  @Test
  void anUnsupportedFloatTypeIsNamed() throws Exception {
    String header = "{\"x\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}";
    byte[] json = header.getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = ByteBuffer.allocate(8 + json.length + 8).order(ByteOrder.LITTLE_ENDIAN);
    b.putLong(json.length).put(json).putDouble(1.0);
    Path file = dir.resolve("f64.safetensors");
    Files.write(file, b.array());
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Safetensors.read(file));
    assertEquals(true, e.getMessage().contains("tensor x is F64"), e.getMessage());
  }

  private static long headerLength(Path file) throws Exception {
    byte[] head = new byte[8];
    try (var in = Files.newInputStream(file)) {
      in.readNBytes(head, 0, 8);
    }
    return ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).getLong();
  }
}
