package io.dynnibal.snapshot;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Bytes written in pieces of every size come back whole and in order, across chunk borders. */
class MemoryFileTest {
  @Test
  void writesOfRandomSizesComeBackAsOneArray() {
    Random random = new Random(7);
    byte[] expected = new byte[2 * MemoryFile.CHUNK + 12_345];
    random.nextBytes(expected);
    MemoryFile file = new MemoryFile();
    int at = 0;
    while (at < expected.length) {
      int n = Math.min(expected.length - at, 1 + random.nextInt(MemoryFile.CHUNK / 3));
      ByteBuffer piece = ByteBuffer.wrap(expected, at, n);
      assertEquals(n, file.write(piece));
      assertEquals(0, piece.remaining());
      at += n;
    }
    assertArrayEquals(expected, file.toByteArray());
  }

  @Test
  void anExactMultipleOfTheChunkAndNothingAtAll() {
    MemoryFile empty = new MemoryFile();
    assertEquals(0, empty.toByteArray().length);
    byte[] whole = new byte[MemoryFile.CHUNK];
    whole[MemoryFile.CHUNK - 1] = 9;
    MemoryFile file = new MemoryFile();
    file.write(ByteBuffer.wrap(whole));
    assertArrayEquals(whole, file.toByteArray());
  }
}
