package io.dynnibal.model.features;

import io.dynnibal.state.TargetFeatures;
import java.util.Arrays;

/**
 * A text as a sparse bag of hashed features: strictly increasing bucket ids and their weights, with
 * the weights of unit L2 norm (an empty text has no features). Unit norm keeps a one-line query and
 * a long description on one scale before the tower sees them.
 *
 * <p>For a {@link io.dynnibal.model.TowerKind#TRANSFORMER} tower the ids are WordPiece token ids in
 * text order (repeats allowed) and every weight is 1.
 */
public record Features(int[] ids, float[] weights) {
  public static final Features EMPTY = new Features(new int[0], new float[0]);

  public Features {
    if (ids.length != weights.length) {
      throw new IllegalArgumentException(ids.length + " ids but " + weights.length + " weights");
    }
  }

  /** The features a shard stored for a target. */
  public static Features of(TargetFeatures target) {
    return new Features(target.featureIds, target.featureWeights);
  }

  public int size() {
    return ids.length;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Features f
        && Arrays.equals(ids, f.ids)
        && Arrays.equals(weights, f.weights);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(ids) + Arrays.hashCode(weights);
  }

  @Override
  public String toString() {
    return "Features[" + ids.length + " ids]";
  }
}
