package io.dynnibal.state;

import io.dynnibal.index.Varints;
import java.io.ByteArrayOutputStream;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.BitSet;

/**
 * A shard's target ids and the tree slots they were given, slot {@code s} being the {@code s}-th id
 * added (slots are never reused). The ids live as UTF-8 in one byte array, slot {@code s}'s from
 * {@code start[s]} to the next slot's start, and an open-addressing table of slots (linear probing)
 * finds an id's slot: a few bytes per target besides the id's own, where a {@code String} per id in
 * a hash table and a list cost several times that. A shard holds one id per target, so this is
 * per-target heap.
 *
 * <p>Invariants: the table holds {@code slot + 1} for every live slot (0: empty), each in the first
 * free-or-matching position of its id's probe sequence (kept on removal by shifting later entries
 * back, so no tombstones accumulate); a removed slot keeps its bytes (slots are not reused) and is
 * marked in {@code removed}.
 */
final class TargetIds {
  private static final float MAX_LOAD = 0.6f;

  private byte[] bytes = new byte[256];
  private int used;
  private int[] start = new int[16];
  private int slots;
  private final BitSet removed = new BitSet();
  private int[] table = new int[16];
  private int size;

  /** Gives {@code id}, which must not be present, the next slot. */
  int add(String id) {
    byte[] utf8 = id.getBytes(StandardCharsets.UTF_8);
    int present = table[find(utf8)];
    if (present != 0) {
      throw new IllegalArgumentException("id " + id + " already has slot " + (present - 1));
    }
    if (used + utf8.length > bytes.length) {
      bytes =
          Arrays.copyOf(bytes, Math.max(used + utf8.length, bytes.length + (bytes.length >> 1)));
    }
    if (slots + 1 >= start.length) {
      start = Arrays.copyOf(start, start.length + (start.length >> 1));
    }
    int slot = slots++;
    start[slot] = used;
    System.arraycopy(utf8, 0, bytes, used, utf8.length);
    used += utf8.length;
    start[slots] = used;
    if (size + 1 > MAX_LOAD * table.length) {
      grow();
    }
    table[find(utf8)] = slot + 1;
    size++;
    return slot;
  }

  /** The id's slot, or -1. */
  int slotOf(String id) {
    byte[] utf8 = id.getBytes(StandardCharsets.UTF_8);
    int i = find(utf8);
    return table[i] == 0 ? -1 : table[i] - 1;
  }

  /** Removes the id; returns its slot, or -1 if it was absent. */
  int remove(String id) {
    int i = find(id.getBytes(StandardCharsets.UTF_8));
    if (table[i] == 0) {
      return -1;
    }
    int slot = table[i] - 1;
    removed.set(slot);
    size--;
    // Shift back every later entry of the cluster that the hole now separates from its home.
    int mask = table.length - 1;
    int hole = i;
    for (int j = (i + 1) & mask; table[j] != 0; j = (j + 1) & mask) {
      int home = homeOf(table[j] - 1) & mask;
      boolean movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
      if (movable) {
        table[hole] = table[j];
        hole = j;
      }
    }
    table[hole] = 0;
    return slot;
  }

  /** The id of a slot, or null if it was removed. */
  String idOf(int slot) {
    if (slot < 0 || slot >= slots) {
      throw new IndexOutOfBoundsException("slot " + slot + " of " + slots);
    }
    if (removed.get(slot)) {
      return null;
    }
    return new String(bytes, start[slot], start[slot + 1] - start[slot], StandardCharsets.UTF_8);
  }

  /** Writes a live slot's id as its UTF-8 length plus one (a varint) and bytes; 0 if removed. */
  private void writeTo(int slot, ByteArrayOutputStream out) {
    if (removed.get(slot)) {
      Varints.write(out, 0);
      return;
    }
    Varints.write(out, start[slot + 1] - start[slot] + 1);
    out.write(bytes, start[slot], start[slot + 1] - start[slot]);
  }

  /**
   * Writes every slot's id ({@link #writeTo}) after the number of slots (a varint): what {@link
   * #readSlotMap} reads back.
   */
  void writeAll(ByteArrayOutputStream out) {
    Varints.write(out, slots);
    for (int slot = 0; slot < slots; slot++) {
      writeTo(slot, out);
    }
  }

  /**
   * Reads the ids {@link #writeAll} wrote from {@code in} (a buffer over {@code bytes}, left just
   * after them) and maps each slot they were written with to the slot of the same id in {@code
   * slots}: -1 for a removed slot or an id {@code slots} does not hold.
   *
   * @throws IllegalArgumentException if the ids are malformed or truncated
   */
  static int[] readSlotMap(ByteBuffer in, byte[] bytes, TargetIds slots) {
    try {
      int count = Varints.read(in);
      if (count < 0 || count > bytes.length) { // each slot takes a byte at least
        throw new IllegalArgumentException(
            "malformed shard index shape: " + count + " slots in " + bytes.length + " bytes");
      }
      int[] slotOf = new int[count];
      for (int old = 0; old < slotOf.length; old++) {
        int length = Varints.read(in) - 1;
        if (length < 0) {
          slotOf[old] = -1;
          continue;
        }
        String id = new String(bytes, in.position(), length, StandardCharsets.UTF_8);
        in.position(in.position() + length);
        slotOf[old] = slots.slotOf(id);
      }
      return slotOf;
    } catch (BufferUnderflowException | IndexOutOfBoundsException | NegativeArraySizeException e) {
      throw new IllegalArgumentException("malformed shard index shape: its ids are truncated", e);
    }
  }

  /** Live ids. */
  int size() {
    return size;
  }

  /** Slots given so far, removed ones included. */
  int slots() {
    return slots;
  }

  /** The table position holding {@code utf8}'s slot, or the empty one its probe ends at. */
  private int find(byte[] utf8) {
    int mask = table.length - 1;
    int i = hash(utf8, 0, utf8.length) & mask;
    while (table[i] != 0 && !matches(table[i] - 1, utf8)) {
      i = (i + 1) & mask;
    }
    return i;
  }

  private boolean matches(int slot, byte[] utf8) {
    return Arrays.equals(bytes, start[slot], start[slot + 1], utf8, 0, utf8.length);
  }

  private int homeOf(int slot) {
    return hash(bytes, start[slot], start[slot + 1]);
  }

  private void grow() {
    int[] old = table;
    table = new int[old.length * 2];
    int mask = table.length - 1;
    for (int entry : old) {
      if (entry != 0) {
        int i = homeOf(entry - 1) & mask;
        while (table[i] != 0) {
          i = (i + 1) & mask;
        }
        table[i] = entry;
      }
    }
  }

  private static int hash(byte[] a, int from, int to) {
    int h = 1;
    for (int i = from; i < to; i++) {
      h = 31 * h + a[i];
    }
    h *= 0x9E3779B9; // spreads the low bits
    return h ^ (h >>> 16);
  }
}
