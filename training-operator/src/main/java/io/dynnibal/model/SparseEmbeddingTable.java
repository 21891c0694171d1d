package io.dynnibal.model;

import io.dynnibal.model.features.Features;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * The hashed-feature embedding table of a tower, kept on the JVM heap with its own sparse ("lazy")
 * Adam.
 *
 * <p>Why not a DJL {@code Embedding} block: a batch touches a few ten thousand of the table's rows,
 * but a dense Adam step reads and writes every row and both moments - over 2^18 rows that alone
 * made a step several times slower than the rest of the network. The bag-of-features pooling is
 * linear, so its backward pass is a scatter of the pooled gradient, done here; the rest of the
 * tower is a DJL network with real autograd. Lazy Adam (as in TensorFlow's LazyAdam) updates the
 * moments only of rows with a gradient, using the global step's bias correction.
 *
 * <p>Invariant: {@code values} holds {@code rows * dim} floats, row-major; {@code mean} and {@code
 * variance} are null until the first update and then the same size.
 */
public final class SparseEmbeddingTable {
  private final int rows;
  private final int dim;
  private final float[] values;
  private float[] mean;
  private float[] variance;

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

  public void restoreMoments(float[] mean, float[] variance) {
    if (mean.length != values.length || variance.length != values.length) {
      throw new IllegalArgumentException(
          "moments of "
              + mean.length
              + "/"
              + variance.length
              + " values for a table of "
              + values.length);
    }
    this.mean = mean;
    this.variance = variance;
  }

  /** {@code out[offset .. offset+dim) = sum_j weight_j * row(id_j)}. */
  public void pool(Features features, float[] out, int offset) {
    Arrays.fill(out, offset, offset + dim, 0f);
    int[] ids = features.ids();
    float[] weights = features.weights();
    for (int j = 0; j < ids.length; j++) {
      int row = checkRow(ids[j]) * dim;
      float w = weights[j];
      for (int k = 0; k < dim; k++) {
        out[offset + k] += w * values[row + k];
      }
    }
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
      float w = weights[j];
      for (int k = 0; k < dim; k++) {
        buffer[at + k] += w * pooledGradient[offset + k];
      }
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

  /**
   * One lazy Adam step on the rows with a gradient, then clears the gradients.
   *
   * @param step the 1-based global step, for bias correction
   */
  public void adamStep(float learningRate, int step, AdamSettings adam) {
    if (mean == null) {
      mean = new float[values.length];
      variance = new float[values.length];
    }
    float b1 = adam.beta1();
    float b2 = adam.beta2();
    double correction = Math.sqrt(1 - Math.pow(b2, step)) / (1 - Math.pow(b1, step));
    float stepSize = (float) (learningRate * correction);
    float eps = adam.epsilon();
    float[] buffer = gradients.buffer();
    int[] touched = gradients.rowsInOrder();
    for (int i = 0; i < touched.length; i++) {
      int row = touched[i] * dim;
      int g0 = i * dim;
      for (int k = 0; k < dim; k++) {
        float g = buffer[g0 + k];
        int at = row + k;
        float m = mean[at] = b1 * mean[at] + (1 - b1) * g;
        float v = variance[at] = b2 * variance[at] + (1 - b2) * g * g;
        values[at] -= stepSize * m / ((float) Math.sqrt(v) + eps);
      }
    }
    gradients.clear();
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
      size++;
      if (size * 2 > keys.length) {
        rehash();
      }
      return (size - 1) * dim;
    }

    int[] rowsInOrder() {
      return Arrays.copyOf(order, size);
    }

    void clear() {
      Arrays.fill(keys, -1);
      Arrays.fill(buffer, 0, size * dim, 0f);
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
