package io.dynnibal.index.sgtree;

/**
 * The distances that define an SG tree's levels for a base {@code b > 1}: {@code b^l} is the
 * covering distance of a child at level {@code l - 1} and the separation of children at level
 * {@code l} (paper §3.2, the cover tree's covering and separation). Powers for the levels trees use
 * come from a table: insertion compares a point with every child of each node on its way down, and
 * would otherwise call {@code Math.pow} per child.
 */
final class LevelScales {
  private static final int OFFSET = 512;

  private final double base;
  private final double logBase;

  /** {@code scales[i] = b^(i - OFFSET)}. */
  private final double[] scales;

  LevelScales(double base) {
    this.base = base;
    this.logBase = Math.log(base);
    this.scales = new double[2 * OFFSET];
    for (int i = 0; i < scales.length; i++) {
      scales[i] = Math.pow(base, i - OFFSET);
    }
  }

  /** {@code b^level}. */
  double scale(int level) {
    int i = level + OFFSET;
    if (i >= 0 && i < scales.length) {
      return scales[i];
    }
    return Math.pow(base, level);
  }

  /**
   * The level of a child at distance {@code d > 0} from its parent: the {@code level} with {@code
   * b^level < d <= b^(level+1)}, exact against {@link #scale} whatever the rounding of the
   * logarithm.
   */
  int levelFor(double d) {
    int level = (int) Math.ceil(Math.log(d) / logBase) - 1;
    while (scale(level + 1) < d) {
      level++;
    }
    while (scale(level) >= d) {
      level--;
    }
    return level;
  }
}
