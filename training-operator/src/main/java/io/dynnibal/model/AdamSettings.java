package io.dynnibal.model;

/**
 * Adam's constants (Kingma and Ba), shared by the dense network and the sparse embedding tables.
 */
public record AdamSettings(float beta1, float beta2, float epsilon) {
  public static final AdamSettings DEFAULT = new AdamSettings(0.9f, 0.999f, 1e-8f);

  public AdamSettings {
    if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1) || !(epsilon > 0)) {
      throw new IllegalArgumentException(
          "Adam needs 0 <= beta1, beta2 < 1 and epsilon > 0, got " + this);
    }
  }
}
