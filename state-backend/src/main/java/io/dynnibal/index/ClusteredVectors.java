package io.dynnibal.index;

import java.util.SplittableRandom;

/**
 * Synthetic targets with the structure of real embeddings: a two-level hierarchical Gaussian
 * mixture on the unit sphere (topics, then subtopics around each topic, then points around each
 * subtopic), normalised to unit length.
 */
public final class ClusteredVectors {
  private ClusteredVectors() {}

  /** {@code count} unit vectors of dimension {@code dim}, reproducible from {@code seed}. */
  public static float[][] generate(int count, int dim, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    int topics = Math.max(2, (int) Math.round(Math.cbrt(count)));
    int subtopicsPerTopic = Math.max(2, topics / 2);
    float[][] topicCenters = new float[topics][];
    for (int t = 0; t < topics; t++) {
      topicCenters[t] = gaussianAround(null, 1.0, dim, random);
    }
    float[][] subtopicCenters = new float[topics * subtopicsPerTopic][];
    for (int s = 0; s < subtopicCenters.length; s++) {
      subtopicCenters[s] = gaussianAround(topicCenters[s / subtopicsPerTopic], 0.5, dim, random);
    }
    float[][] out = new float[count][];
    for (int i = 0; i < count; i++) {
      out[i] =
          gaussianAround(
              subtopicCenters[random.nextInt(subtopicCenters.length)], 0.35, dim, random);
    }
    return out;
  }

  /** A unit query near a random target, as a trained query encoder would put it. */
  public static float[] queryNear(float[] target, double spread, SplittableRandom random) {
    return gaussianAround(target, spread, target.length, random);
  }

  private static float[] gaussianAround(
      float[] center, double spread, int dim, SplittableRandom random) {
    float[] v = new float[dim];
    double perDim = spread / Math.sqrt(dim);
    double norm = 0;
    for (int i = 0; i < dim; i++) {
      double x =
          (center == null ? 0 : center[i]) + gaussian(random) * (center == null ? 1 : perDim);
      v[i] = (float) x;
      norm += x * x;
    }
    norm = Math.sqrt(norm);
    for (int i = 0; i < dim; i++) {
      v[i] /= norm;
    }
    return v;
  }

  private static double gaussian(SplittableRandom random) {
    double u = random.nextDouble();
    double w = random.nextDouble();
    return Math.sqrt(-2 * Math.log(1 - u)) * Math.cos(2 * Math.PI * w);
  }
}
