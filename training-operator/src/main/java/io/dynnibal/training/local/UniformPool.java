package io.dynnibal.training.local;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.negatives.NegativesPool;
import io.dynnibal.training.SamplingCorrection;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;

/**
 * The targets the trainer alone ({@link LocalTraining}) draws uniform negatives from: the named
 * ones (those training pairs name, or every target under {@code all}) each with weight 1, the
 * others with weight {@code unnamedShare}.
 */
record UniformPool(int[] named, int[] unnamed, double unnamedShare) {
  static UniformPool of(
      NegativesPool negativesPool,
      double unnamedShare,
      List<LabelledQuery> pairs,
      Map<String, Integer> targetIndex,
      int targetCount) {
    if (negativesPool == NegativesPool.ALL) {
      return new UniformPool(IntStream.range(0, targetCount).toArray(), new int[0], 0);
    }
    int[] named = pairs.stream().mapToInt(q -> targetIndex.get(q.targetId())).distinct().toArray();
    BitSet isNamed = new BitSet(targetCount);
    for (int t : named) {
      isNamed.set(t);
    }
    int[] unnamed = IntStream.range(0, targetCount).filter(t -> !isNamed.get(t)).toArray();
    return new UniformPool(named, unnamed, unnamedShare);
  }

  /**
   * How many times a step of {@code batch} pairs and {@code uniform} draws expects target {@code t}
   * among its candidates: the uniform draws by its weight, and the batch's positives taken as
   * uniform over the named targets (the data's own frequencies are not tracked).
   */
  double expectedCount(int t, int batch, int uniform) {
    double unnamedMass = unnamedShare * unnamed.length;
    double weight = unnamed.length > 0 && !isNamed(t) ? unnamedShare : 1;
    return SamplingCorrection.uniformRate(batch, named.length)
        + uniform * weight / (named.length + unnamedMass);
  }

  private boolean isNamed(int t) {
    return java.util.Arrays.binarySearch(unnamed, t) < 0;
  }

  /**
   * One target, with probability proportional to its weight. Without unnamed weight it is one draw
   * from the random stream, as before the share existed (runs stay reproducible).
   */
  int draw(Random random) {
    double unnamedMass = unnamedShare * unnamed.length;
    if (unnamedMass == 0 || random.nextDouble() * (named.length + unnamedMass) < named.length) {
      return named[random.nextInt(named.length)];
    }
    return unnamed[random.nextInt(unnamed.length)];
  }
}
