package io.dynnibal.model;

/** What a tower does with a text's hashed features. */
public enum TowerKind {
  /** Weighted bag -> Linear-GELU-Linear plus a linear skip: fast on a CPU, the default. */
  BAG,
  /**
   * The strongest features as a set of tokens -> one self-attention layer -> mean pool -> linear
   * ({@link SetTransformerBlock}).
   */
  SET_TRANSFORMER
}
