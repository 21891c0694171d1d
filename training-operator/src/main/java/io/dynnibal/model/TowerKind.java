package io.dynnibal.model;

import java.util.Arrays;
import java.util.List;

/** What a tower does with a text's hashed features; {@link #id} is its name in settings. */
public enum TowerKind {
  /** Weighted bag -> Linear-GELU-Linear plus a linear skip: fast on a CPU, the default. */
  BAG("bag"),
  /**
   * The strongest features as a set of tokens -> one self-attention layer -> mean pool -> linear
   * ({@link SetTransformerBlock}).
   */
  SET_TRANSFORMER("set-transformer"),
  /**
   * A pretrained BERT-family encoder over WordPiece tokens (the bundled all-MiniLM-L6-v2 by
   * default), fine-tuned ({@link io.dynnibal.model.transformer.BertEncoderBlock}).
   */
  TRANSFORMER("transformer");

  public static final List<String> NAMES = Arrays.stream(values()).map(k -> k.id).toList();

  public final String id;

  TowerKind(String id) {
    this.id = id;
  }

  public static TowerKind of(String id) {
    for (TowerKind k : values()) {
      if (k.id.equals(id)) {
        return k;
      }
    }
    throw new IllegalArgumentException("unknown tower \"" + id + "\"; one of " + NAMES);
  }

  @Override
  public String toString() {
    return id;
  }
}
