package io.dynnibal.model.transformer;

import java.util.Arrays;

/** A text's token ids as a map key: equal only to the same ids in the same order. */
public record TokenIds(int[] ids) {
  @Override
  public boolean equals(Object o) {
    return o instanceof TokenIds t && Arrays.equals(ids, t.ids);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(ids);
  }

  @Override
  public String toString() {
    return Arrays.toString(ids);
  }
}
