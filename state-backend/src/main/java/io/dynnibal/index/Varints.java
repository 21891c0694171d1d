package io.dynnibal.index;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;

/** Unsigned LEB128 ints: 7 bits a byte, low bits first, the high bit set on all but the last. */
public final class Varints {
  private Varints() {}

  public static void write(ByteArrayOutputStream out, int value) {
    while ((value & ~0x7F) != 0) {
      out.write((value & 0x7F) | 0x80);
      value >>>= 7;
    }
    out.write(value);
  }

  /**
   * @throws java.nio.BufferUnderflowException if the buffer ends within the varint
   * @throws IllegalArgumentException if it runs over 5 bytes
   */
  public static int read(ByteBuffer in) {
    int value = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      byte b = in.get();
      value |= (b & 0x7F) << shift;
      if (b >= 0) {
        return value;
      }
    }
    throw new IllegalArgumentException("malformed: a varint longer than 5 bytes");
  }
}
