package io.dynnibal.training;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.training.GradientCollector;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.TorchRuntime;
import io.dynnibal.model.Tower;
import io.dynnibal.model.features.Features;
import java.util.ArrayList;
import java.util.List;

/**
 * Trains a {@link DualEncoder} one {@link TrainingBatch} at a time: forward both towers, {@link
 * SampledSoftmaxLoss}, backward through the DJL networks into the pooled inputs and from there into
 * the sparse embedding tables, then one Adam step on both ({@link DenseAdam} for the networks,
 * {@link io.dynnibal.model.SparseEmbeddingTable#adamStep} for the tables) at the {@link
 * LearningRateSchedule}'s rate.
 *
 * <p>A step cannot move the parameters by an unbounded amount: the global gradient norm (networks
 * and tables) is clipped to {@link TrainerConfig#clipNorm}, and a batch whose loss or gradient is
 * not finite is refused ({@link SkippedStep}) with nothing changed.
 *
 * <p>Deterministic: the same encoder seed and the same batches give the same parameters (on the
 * CPU). Not thread-safe.
 */
public final class DualEncoderTrainer {
  private final DualEncoder encoder;
  private TrainerConfig config;
  private final List<DenseAdam> networkOptimizers = new ArrayList<>();
  private int step;
  private double totalMillis;

  public DualEncoderTrainer(DualEncoder encoder, TrainerConfig config) {
    this.encoder = encoder;
    this.config = config;
    for (Tower tower : encoder.distinctTowers()) {
      networkOptimizers.add(
          new DenseAdam(tower.trainableParameters(), config.adam(), encoder.manager()));
    }
  }

  public DualEncoder encoder() {
    return encoder;
  }

  public TrainerConfig config() {
    return config;
  }

  /**
   * Replaces the learning-rate schedule from the next step on, as a run with a time budget does
   * once it knows how many steps the budget holds. Adam's moments and the step count are kept.
   */
  public void reschedule(LearningRateSchedule schedule) {
    config = config.withSchedule(schedule);
  }

  /** Steps taken so far (restored with a snapshot). */
  public int step() {
    return step;
  }

  /** Mean wall time per step since this trainer was made, in steps per second. */
  public double stepsPerSecond(int stepsSinceStart) {
    return totalMillis == 0 ? 0 : stepsSinceStart / (totalMillis / 1000);
  }

  /**
   * One step on {@code batch}.
   *
   * @throws SkippedStep when the loss or the gradient is not finite: the parameters and the
   *     optimiser's state are left exactly as they were, and the caller reports the batch
   */
  public StepResult step(TrainingBatch batch) {
    long start = System.nanoTime();
    int next = step + 1;
    float[] mask =
        SampledSoftmaxLoss.mask(batch.positiveIds(), batch.negativeIds(), batch.columnOffsets());
    List<Features> candidates =
        new ArrayList<>(batch.positives().size() + batch.negatives().size());
    candidates.addAll(batch.positives());
    candidates.addAll(batch.negatives());
    float lossValue;
    try (NDManager scope = encoder.manager().newSubManager()) {
      Tower.Forward queries;
      Tower.Forward targets;
      try (GradientCollector collector = encoder.manager().getEngine().newGradientCollector()) {
        queries = encoder.queryTower().forwardForTraining(batch.queries(), scope);
        targets = encoder.targetTower().forwardForTraining(candidates, scope);
        if (config.falseNegativeMargin() > 0) {
          float[] scores =
              queries
                  .output()
                  .stopGradient()
                  .matMul(targets.output().stopGradient().transpose())
                  .toFloatArray();
          FalseNegativeFilter.apply(
              mask,
              scores,
              batch.queries().size(),
              candidates.size(),
              config.falseNegativeMargin());
        }
        NDArray loss =
            SampledSoftmaxLoss.loss(
                queries.output(), targets.output(), mask, encoder.config().scoreScale(), scope);
        lossValue = loss.getFloat();
        if (!Float.isFinite(lossValue)) {
          throw new SkippedStep(
              "loss is "
                  + lossValue
                  + " at step "
                  + next
                  + "; parameters left unchanged (learning rate too high, or non-finite input?)");
        }
        collector.backward(loss);
      }
      // The collector restores the thread's grad mode, which may have been on.
      TorchRuntime.noGradOnThisThread();
      encoder.queryTower().backpropagateToTable(queries);
      encoder.targetTower().backpropagateToTable(targets);
      double gradientNorm = Math.sqrt(squaredGradientNorm(scope));
      if (!Double.isFinite(gradientNorm)) {
        List<String> where = new ArrayList<>();
        for (DenseAdam adam : networkOptimizers) {
          where.addAll(adam.nonFiniteGradients(scope));
        }
        for (Tower tower : encoder.distinctTowers()) {
          if (!Double.isFinite(tower.table().pendingGradientSquaredNorm())) {
            where.add("embedding table");
          }
        }
        clearGradients(scope);
        throw new SkippedStep(
            "gradient norm is "
                + gradientNorm
                + " at step "
                + next
                + " (loss "
                + lossValue
                + ", non-finite in "
                + where
                + "); parameters left unchanged");
      }
      float clipNorm = config.clipNorm();
      boolean clipped = clipNorm > 0 && gradientNorm > clipNorm;
      float gradientScale = clipped ? (float) (clipNorm / gradientNorm) : 1f;
      float rate = config.schedule().rate(next);
      for (DenseAdam adam : networkOptimizers) {
        adam.step(rate, next, gradientScale, scope);
      }
      int rowsUpdated = 0;
      float tableRate = rate * config.embeddingRateFactor();
      for (Tower tower : encoder.distinctTowers()) {
        rowsUpdated += tower.table().pendingRows();
        tower.table().adamStep(tableRate, gradientScale, config.adam());
      }
      step = next;
      double millis = (System.nanoTime() - start) / 1e6;
      totalMillis += millis;
      return new StepResult(
          next,
          lossValue,
          rate,
          SampledSoftmaxLoss.maskedCount(mask),
          rowsUpdated,
          (float) gradientNorm,
          clipped,
          millis);
    } catch (RuntimeException e) {
      for (Tower tower : encoder.distinctTowers()) {
        tower.table().clearGradients();
      }
      throw e;
    }
  }

  /** Networks and tables together: the norm that clipping bounds. */
  private double squaredGradientNorm(NDManager scope) {
    double sum = 0;
    for (DenseAdam adam : networkOptimizers) {
      sum += adam.squaredGradientNorm(scope);
    }
    for (Tower tower : encoder.distinctTowers()) {
      sum += tower.table().pendingGradientSquaredNorm();
    }
    return sum;
  }

  private void clearGradients(NDManager scope) {
    for (DenseAdam adam : networkOptimizers) {
      adam.clearGradients(scope);
    }
    for (Tower tower : encoder.distinctTowers()) {
      tower.table().clearGradients();
    }
  }

  /**
   * Optimiser state for a snapshot: per distinct tower, the networks' moments in parameter order.
   */
  public List<List<float[]>> networkMoments() {
    List<List<float[]>> out = new ArrayList<>();
    for (DenseAdam adam : networkOptimizers) {
      out.add(adam.moments());
    }
    return out;
  }

  /**
   * Restores what {@link #networkMoments} and the step counter held (tables restore their own
   * moments).
   */
  public void restore(int restoredStep, List<List<float[]>> moments) {
    if (moments.size() != networkOptimizers.size()) {
      throw new IllegalArgumentException(
          "snapshot has optimiser state for "
              + moments.size()
              + " towers, model has "
              + networkOptimizers.size());
    }
    for (int i = 0; i < moments.size(); i++) {
      networkOptimizers.get(i).restoreMoments(moments.get(i));
    }
    this.step = restoredStep;
  }
}
