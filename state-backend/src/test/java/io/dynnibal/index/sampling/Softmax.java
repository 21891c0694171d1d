package io.dynnibal.index.sampling;

import io.dynnibal.index.VectorMath;

/** The exact softmax over all targets and the statistics the sampler tests compare against it. */
final class Softmax {
  private Softmax() {}

  static double[] of(float[][] vectors, float[] query, double beta) {
    double[] p = new double[vectors.length];
    double max = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < vectors.length; i++) {
      p[i] = beta * VectorMath.dot(query, vectors[i]);
      max = Math.max(max, p[i]);
    }
    double sum = 0;
    for (int i = 0; i < p.length; i++) {
      p[i] = Math.exp(p[i] - max);
      sum += p[i];
    }
    for (int i = 0; i < p.length; i++) {
      p[i] /= sum;
    }
    return p;
  }

  /** {@code log sum_y exp(beta <query, y>)}. */
  static double logPartition(float[][] vectors, float[] query, double beta) {
    double max = Double.NEGATIVE_INFINITY;
    for (float[] v : vectors) {
      max = Math.max(max, beta * VectorMath.dot(query, v));
    }
    double sum = 0;
    for (float[] v : vectors) {
      sum += Math.exp(beta * VectorMath.dot(query, v) - max);
    }
    return max + Math.log(sum);
  }

  static double totalVariation(double[] p, double[] q) {
    double sum = 0;
    for (int i = 0; i < p.length; i++) {
      sum += Math.abs(p[i] - q[i]);
    }
    return sum / 2;
  }

  static double[] empirical(int[] counts, long total) {
    double[] q = new double[counts.length];
    for (int i = 0; i < counts.length; i++) {
      q[i] = counts[i] / (double) total;
    }
    return q;
  }

  /**
   * Pearson's chi-square statistic of observed counts against probabilities, with targets whose
   * expected count is under 5 pooled into one bin; returns {statistic, degrees of freedom}.
   */
  static double[] chiSquare(int[] observed, double[] p, long total) {
    double statistic = 0;
    int bins = 0;
    double pooledExpected = 0;
    long pooledObserved = 0;
    for (int i = 0; i < p.length; i++) {
      double expected = p[i] * total;
      if (expected < 5) {
        pooledExpected += expected;
        pooledObserved += observed[i];
      } else {
        statistic += (observed[i] - expected) * (observed[i] - expected) / expected;
        bins++;
      }
    }
    if (pooledExpected > 0) {
      statistic +=
          (pooledObserved - pooledExpected) * (pooledObserved - pooledExpected) / pooledExpected;
      bins++;
    }
    return new double[] {statistic, bins - 1};
  }

  /**
   * Upper quantile of the chi-square distribution (Wilson-Hilferty), for z = 3.09 the 0.999
   * quantile.
   */
  static double chiSquareQuantile(double degreesOfFreedom, double z) {
    double k = degreesOfFreedom;
    double t = 1 - 2 / (9 * k) + z * Math.sqrt(2 / (9 * k));
    return k * t * t * t;
  }
}
