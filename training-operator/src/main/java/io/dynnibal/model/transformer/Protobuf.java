package io.dynnibal.model.transformer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Just enough of the protobuf wire format to walk a message without generated classes: fields in
 * order, each with its number, wire type and value (a varint, or a length-delimited slice of the
 * same buffer, never copied).
 */
final class Protobuf {
  static final int VARINT = 0;
  static final int FIXED64 = 1;
  static final int LENGTH_DELIMITED = 2;
  static final int FIXED32 = 5;

  private final ByteBuffer buffer;
  private final int end;
  private int position;

  int number;
  int wireType;
  long varint;
  int sliceStart;
  int sliceEnd;

  /** The fields of {@code buffer[start, end)}. */
  Protobuf(ByteBuffer buffer, int start, int end) {
    this.buffer = buffer;
    this.position = start;
    this.end = end;
  }

  /** The fields of the length-delimited field just read. */
  Protobuf message() {
    return new Protobuf(buffer, sliceStart, sliceEnd);
  }

  String string() {
    byte[] bytes = new byte[sliceEnd - sliceStart];
    buffer.get(sliceStart, bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }

  /** Reads the next field; false at the end of the message. */
  boolean next() {
    if (position >= end) {
      return false;
    }
    long key = readVarint();
    number = (int) (key >>> 3);
    wireType = (int) (key & 7);
    switch (wireType) {
      case VARINT -> varint = readVarint();
      case FIXED64 -> skip(8);
      case FIXED32 -> skip(4);
      case LENGTH_DELIMITED -> {
        long length = readVarint();
        if (length < 0 || length > end - position) {
          throw new IllegalArgumentException(
              "field "
                  + number
                  + " claims "
                  + length
                  + " bytes; only "
                  + (end - position)
                  + " left");
        }
        sliceStart = position;
        sliceEnd = position + (int) length;
        position = sliceEnd;
      }
      default ->
          throw new IllegalArgumentException(
              "wire type " + wireType + " of field " + number + " is not supported");
    }
    return true;
  }

  /** The varints of a packed repeated field (the slice just read). */
  long[] packedVarints() {
    Protobuf packed = new Protobuf(buffer, sliceStart, sliceEnd);
    long[] values = new long[sliceEnd - sliceStart];
    int n = 0;
    while (packed.position < packed.end) {
      values[n++] = packed.readVarint();
    }
    return java.util.Arrays.copyOf(values, n);
  }

  /** The bytes of the length-delimited field just read, as a view (position 0, little-endian). */
  ByteBuffer sliceBuffer() {
    return buffer.slice(sliceStart, sliceEnd - sliceStart);
  }

  private void skip(int bytes) {
    if (bytes > end - position) {
      throw new IllegalArgumentException("truncated message");
    }
    position += bytes;
  }

  private long readVarint() {
    long result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (position >= end) {
        throw new IllegalArgumentException("truncated varint");
      }
      byte b = buffer.get(position++);
      result |= (long) (b & 0x7F) << shift;
      if (b >= 0) {
        return result;
      }
    }
    throw new IllegalArgumentException("varint longer than 10 bytes");
  }
}
