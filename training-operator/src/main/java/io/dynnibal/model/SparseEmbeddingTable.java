package io.dynnibal.model;

import io.dynnibal.model.features.Features;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * The hashed-feature embedding table of a tower, kept on the JVM heap with its own sparse ("lazy")
 * Adam.
 *
 * <p>Why not a DJL {@code Embedding} block: a batch touches a small fraction of the table's rows,
 * but a dense Adam step reads and writes every row and both moments. The bag-of-features pooling is
 * linear, so its backward pass is a scatter of the pooled gradient, done here; the rest of the
 * tower is a DJL network with real autograd. Lazy Adam (as in TensorFlow's LazyAdam) updates the
 * moments only of rows with a gradient ({@link AdamKernel}).
 *
 * <p>Bias correction is per row, by the number of updates the row has had, not by the global step.
 * With the global step a row first touched at step t would move {@code sqrt(1 - beta2^t) / (1 -
 * beta1^t) * (1 - beta1) / sqrt(1 - beta2)} times the rate, several times it late in training, and
 * a rare feature's row would jump by several times its own scale on its first gradient. Per-row
 * counts make every row's first step exactly the rate, as dense Adam's first step is. (Moments of
 * rows without a gradient do not decay: they are the row's own history, as in LazyAdam.)
 *
 * <p>Invariant: {@code values} holds {@code rows * dim} floats, row-major; {@code mean} and {@code
 * variance} are null until the first update and then the same size; {@code updates[r]} counts the
 * Adam steps row r had (saturating at {@link #SATURATED_UPDATES}, beyond which the correction is 1
 * to float precision).
 */
public final class SparseEmbeddingTable {
  private final int rows;
  private final int dim;
  private final float[] values;
  private float[] mean;
  private float[] variance;
  private int[] updates;
  private float[] corrections;
  private AdamSettings correctionsFor;

  /** Updates after which {@code beta2^n} is below 1e-9 for any beta2 <= 0.999: correction 1. */
  static final int SATURATED_UPDATES = 1 << 15;

  private final RowGradients gradients;

  private SparseEmbeddingTable(int rows, int dim, float[] values) {
    this.rows = rows;
    this.dim = dim;
    this.values = values;
    this.gradients = new RowGradients(dim);
  }

  /**
   * A table with entries drawn from N(0, 1/dim), so a pooled unit-norm bag has an expected norm of
   * about 1.
   */
  public static SparseEmbeddingTable random(int rows, int dim, long seed) {
    if ((long) rows * dim > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException(
          "table of " + rows + " x " + dim + " is too large for one array");
    }
    float[] values = new float[rows * dim];
    SplittableRandom random = new SplittableRandom(seed);
    double scale = 1 / Math.sqrt(dim);
    for (int i = 0; i < values.length; i++) {
      values[i] = (float) (gaussian(random) * scale);
    }
    return new SparseEmbeddingTable(rows, dim, values);
  }

  /** Wraps stored values (a snapshot); the array is used, not copied. */
  public static SparseEmbeddingTable of(int rows, int dim, float[] values) {
    if (values.length != rows * dim) {
      throw new IllegalArgumentException(
          "expected " + rows * dim + " values, got " + values.length);
    }
    return new SparseEmbeddingTable(rows, dim, values);
  }

  public int rows() {
    return rows;
  }

  public int dim() {
    return dim;
  }

  /** The values, row-major (the live array: for snapshots). */
  public float[] values() {
    return values;
  }

  /**
   * Adam's first and second moments, or null before the first update (the live arrays: for
   * snapshots).
   */
  public float[] mean() {
    return mean;
  }

  public float[] variance() {
    return variance;
  }

  /**
   * Updates each row has had, as floats (exact: counts saturate far below 2^24), or null before the
   * first update (a copy: for snapshots).
   */
  public float[] updateCounts() {
    if (updates == null) {
      return null;
    }
    float[] out = new float[rows];
    for (int r = 0; r < rows; r++) {
      out[r] = updates[r];
    }
    return out;
  }

  /**
   * Restores Adam's state.
   *
   * @param updateCounts per row, the updates it had ({@link #updateCounts}); null for a snapshot
   *     written before rows counted their updates: a row with a non-zero second moment is then
   *     taken to have had {@code step} updates, which reproduces the bias correction it trained
   *     with
   */
  public void restoreMoments(float[] mean, float[] variance, float[] updateCounts, int step) {
    if (mean.length != values.length || variance.length != values.length) {
      throw new IllegalArgumentException(
          "moments of "
              + mean.length
              + "/"
              + variance.length
              + " values for a table of "
              + values.length);
    }
    if (updateCounts != null && updateCounts.length != rows) {
      throw new IllegalArgumentException(
          "update counts of " + updateCounts.length + " rows for a table of " + rows);
    }
    this.mean = mean;
    this.variance = variance;
    this.updates = new int[rows];
    for (int r = 0; r < rows; r++) {
      if (updateCounts != null) {
        updates[r] = (int) Math.min(SATURATED_UPDATES, Math.max(0, updateCounts[r]));
      } else if (touched(r)) {
        updates[r] = Math.min(SATURATED_UPDATES, Math.max(0, step));
      }
    }
  }

  private boolean touched(int row) {
    for (int k = row * dim; k < (row + 1) * dim; k++) {
      if (variance[k] != 0) {
        return true;
      }
    }
    return false;
  }

  /** {@code out[offset .. offset+dim) = sum_j weight_j * row(id_j)}. */
  public void pool(Features features, float[] out, int offset) {
    int[] ids = features.ids();
    for (int id : ids) {
      checkRow(id);
    }
    RowKernels.weightedRowSum(values, dim, ids, features.weights(), ids.length, out, offset);
  }

  /**
   * Adds the gradient of a loss w.r.t. {@link #pool}'s output: {@code grad(row id_j) += weight_j *
   * pooledGradient}.
   */
  public void accumulateGradient(Features features, float[] pooledGradient, int offset) {
    int[] ids = features.ids();
    float[] weights = features.weights();
    for (int j = 0; j < ids.length; j++) {
      int at = gradients.rowOffset(checkRow(ids[j]));
      float[] buffer = gradients.buffer(); // after rowOffset, which may grow it
      RowKernels.addScaled(weights[j], pooledGradient, offset, buffer, at, dim);
    }
  }

  /** The pending gradient of one row (zeros when it has none); for tests. */
  float[] pendingGradient(int row) {
    int[] rows = gradients.rowsInOrder();
    for (int i = 0; i < rows.length; i++) {
      if (rows[i] == row) {
        return Arrays.copyOfRange(gradients.buffer(), i * dim, (i + 1) * dim);
      }
    }
    return new float[dim];
  }

  /** Rows with a pending gradient (since the last {@link #adamStep}). */
  public int pendingRows() {
    return gradients.size();
  }

  /** The squared L2 norm of the pending gradient (all rows together), in double precision. */
  public double pendingGradientSquaredNorm() {
    float[] buffer = gradients.buffer();
    double sum = 0;
    for (int i = 0, n = gradients.size() * dim; i < n; i++) {
      sum += (double) buffer[i] * buffer[i];
    }
    return sum;
  }

  /**
   * One lazy Adam step on the rows with a gradient, each bias-corrected by its own update count,
   * then clears the gradients.
   *
   * @param gradientScale multiplies the pending gradient first (global-norm clipping; 1: none)
   */
  public void adamStep(float learningRate, float gradientScale, AdamSettings adam) {
    if (mean == null) {
      mean = new float[values.length];
      variance = new float[values.length];
      updates = new int[rows];
    }
    AdamKernel.Moments state = new AdamKernel.Moments(values, mean, variance);
    AdamKernel.Step step =
        new AdamKernel.Step(gradientScale, adam.beta1(), adam.beta2(), adam.epsilon());
    float[] buffer = gradients.buffer();
    // In the order of the rows in the tables rather than of first touch: each row's update is on
    // its own, so the order changes no bit, and ascending addresses let the memory system fetch
    // ahead through the three table-sized arrays.
    long[] rowThenSlot = gradients.rowsWithSlots();
    Arrays.sort(rowThenSlot);
    float[] correction = corrections(adam); // looked up once a step, not once a row
    for (long packed : rowThenSlot) {
      int r = (int) (packed >>> 32);
      int i = (int) packed;
      int n = updates[r] = Math.min(SATURATED_UPDATES, updates[r] + 1);
      float stepSize = learningRate * correction[n];
      AdamKernel.update(state, r * dim, buffer, i * dim, dim, step, stepSize);
    }
    gradients.clear();
  }

  /**
   * Adam's bias correction {@code sqrt(1 - beta2^n) / (1 - beta1^n)} by update count n, computed
   * once per setting rather than with two pow calls per touched row and step.
   */
  private float[] corrections(AdamSettings adam) {
    if (corrections == null || !adam.equals(correctionsFor)) {
      float[] c = new float[SATURATED_UPDATES + 1];
      for (int n = 1; n <= SATURATED_UPDATES; n++) {
        c[n] = (float) (Math.sqrt(1 - Math.pow(adam.beta2(), n)) / (1 - Math.pow(adam.beta1(), n)));
      }
      corrections = c;
      correctionsFor = adam;
    }
    return corrections;
  }

  /** Drops pending gradients without applying them. */
  public void clearGradients() {
    gradients.clear();
  }

  private int checkRow(int id) {
    if (id < 0 || id >= rows) {
      throw new IllegalArgumentException(
          "feature id "
              + id
              + " outside the table's "
              + rows
              + " rows"
              + " (features made with another bucket count?)");
    }
    return id;
  }

  private static double gaussian(SplittableRandom random) {
    // Box-Muller: SplittableRandom has no nextGaussian on Java 17.
    double u = random.nextDouble();
    double v = random.nextDouble();
    return Math.sqrt(-2 * Math.log(1 - u)) * Math.cos(2 * Math.PI * v);
  }

  /**
   * Gradient rows in first-touch order: an open-addressing map row -> slot, slots packed in one
   * growing array. Rows are applied in first-touch order, which is deterministic for a given batch.
   */
  private static final class RowGradients {
    private final int dim;
    private int[] keys = new int[1 << 12];
    private int[] slots = new int[1 << 12];
    private int[] order = new int[1 << 11];
    private float[] buffer;
    private int size;

    RowGradients(int dim) {
      this.dim = dim;
      Arrays.fill(keys, -1);
      buffer = new float[order.length * dim];
    }

    int size() {
      return size;
    }

    float[] buffer() {
      return buffer;
    }

    int rowOffset(int row) {
      int mask = keys.length - 1;
      int h = (row * 0x9E3779B9) & mask;
      while (keys[h] != -1) {
        if (keys[h] == row) {
          return slots[h] * dim;
        }
        h = (h + 1) & mask;
      }
      if (size == order.length) {
        order = Arrays.copyOf(order, size * 2);
        buffer = Arrays.copyOf(buffer, order.length * dim);
      }
      keys[h] = row;
      slots[h] = size;
      order[size] = row;
      int offset = size * dim;
      // Zeroed as it is taken, in the cache lines the gradient is about to be added to, rather
      // than the whole buffer after each step.
      Arrays.fill(buffer, offset, offset + dim, 0f);
      size++;
      if (size * 2 > keys.length) {
        rehash();
      }
      return offset;
    }

    /** {@code row << 32 | slot} for every row with a gradient. */
    long[] rowsWithSlots() {
      long[] out = new long[size];
      for (int i = 0; i < size; i++) {
        out[i] = (long) order[i] << 32 | i;
      }
      return out;
    }

    int[] rowsInOrder() {
      return Arrays.copyOf(order, size);
    }

    /** Forgets every row; their slots are zeroed when they are taken again. */
    void clear() {
      Arrays.fill(keys, -1);
      size = 0;
    }

    private void rehash() {
      int[] newKeys = new int[keys.length * 2];
      int[] newSlots = new int[keys.length * 2];
      Arrays.fill(newKeys, -1);
      int mask = newKeys.length - 1;
      for (int i = 0; i < size; i++) {
        int h = (order[i] * 0x9E3779B9) & mask;
        while (newKeys[h] != -1) {
          h = (h + 1) & mask;
        }
        newKeys[h] = order[i];
        newSlots[h] = i;
      }
      keys = newKeys;
      slots = newSlots;
    }
  }
}
