package io.dynnibal.training;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.nn.Parameter;
import io.dynnibal.model.AdamSettings;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Adam over the DJL networks' parameters. Ours rather than DJL's optimizer because its moments must
 * go into parameter snapshots, so that a restored trainer continues exactly where it stopped (DJL
 * keeps them private).
 *
 * <p>Runs outside a gradient collector (libtorch's grad mode off), so in-place updates of leaf
 * tensors are allowed.
 */
final class DenseAdam {
  private final List<Parameter> parameters;
  private final AdamSettings adam;
  private final List<NDArray> mean = new ArrayList<>();
  private final List<NDArray> variance = new ArrayList<>();

  DenseAdam(List<Parameter> parameters, AdamSettings adam, NDManager manager) {
    this.parameters = parameters;
    this.adam = adam;
    for (Parameter p : parameters) {
      mean.add(manager.zeros(p.getArray().getShape()));
      variance.add(manager.zeros(p.getArray().getShape()));
    }
  }

  /** The squared L2 norm of the gradients the last backward pass left, all parameters together. */
  double squaredGradientNorm(NDManager scope) {
    double sum = 0;
    for (Parameter p : parameters) {
      NDArray gradient = scoped(p.getArray().getGradient(), scope);
      // In double: squares of float gradients above 1.8e19 overflow float, and a huge but finite
      // gradient must be clipped, not refused as non-finite.
      NDArray wide = scoped(gradient.toType(DataType.FLOAT64, true), scope);
      NDArray squares = scoped(wide.square(), scope);
      sum += scoped(squares.sum(), scope).getDouble();
    }
    return sum;
  }

  /** The names of the parameters whose gradient holds a NaN or an infinity (for the refusal). */
  List<String> nonFiniteGradients(NDManager scope) {
    List<String> names = new ArrayList<>();
    for (Parameter p : parameters) {
      NDArray gradient = scoped(p.getArray().getGradient(), scope);
      NDArray finite = scoped(gradient.isInfinite().logicalOr(gradient.isNaN()), scope);
      if (scoped(finite.any(), scope).getBoolean()) {
        names.add(p.getName() + Arrays.toString(p.getArray().getShape().getShape()));
      }
    }
    return names;
  }

  /** Zeroes the gradients without a step (a skipped batch). */
  void clearGradients(NDManager scope) {
    for (Parameter p : parameters) {
      zero(scoped(p.getArray().getGradient(), scope));
    }
  }

  /**
   * Sets every element to 0. Not {@code muli(0)} or {@code subi(itself)} (DJL's own zeroGradients):
   * a NaN stays NaN under both, and one non-finite backward pass would poison every later step.
   */
  static void zero(NDArray gradient) {
    gradient.set(new ai.djl.ndarray.index.NDIndex("..."), 0f);
  }

  /**
   * One step with the gradients the last backward pass left, scaled by {@code gradientScale}
   * (global-norm clipping; 1: none); zeroes them afterwards.
   */
  void step(float learningRate, int step, float gradientScale, NDManager scope) {
    float b1 = adam.beta1();
    float b2 = adam.beta2();
    float stepSize =
        (float) (learningRate * Math.sqrt(1 - Math.pow(b2, step)) / (1 - Math.pow(b1, step)));
    for (int i = 0; i < parameters.size(); i++) {
      NDArray weight = parameters.get(i).getArray();
      NDArray gradient = weight.getGradient();
      gradient.attach(scope);
      if (gradientScale != 1f) {
        gradient.muli(gradientScale);
      }
      NDArray m = mean.get(i);
      NDArray v = variance.get(i);
      // Every new array belongs to its first operand's manager (the model's, which lives as long as
      // the encoder): attach each temporary to the step's scope, or native memory grows with every
      // step.
      NDArray scaledGradient = scoped(gradient.mul(1 - b1), scope);
      m.muli(b1).addi(scaledGradient);
      NDArray squared = scoped(gradient.square(), scope).muli(1 - b2);
      v.muli(b2).addi(squared);
      NDArray denominator = scoped(v.sqrt(), scope).addi(adam.epsilon());
      NDArray update = scoped(m.div(denominator), scope).muli(stepSize);
      weight.subi(update);
      zero(gradient);
    }
  }

  private static NDArray scoped(NDArray array, NDManager scope) {
    array.attach(scope);
    return array;
  }

  /** Moments in parameter order, as flat arrays (for snapshots). */
  List<float[]> moments() {
    List<float[]> out = new ArrayList<>();
    for (int i = 0; i < parameters.size(); i++) {
      out.add(mean.get(i).toFloatArray());
      out.add(variance.get(i).toFloatArray());
    }
    return out;
  }

  void restoreMoments(List<float[]> moments) {
    if (moments.size() != 2 * parameters.size()) {
      throw new IllegalArgumentException(
          "expected moments of " + parameters.size() + " parameters, got " + moments.size() / 2);
    }
    for (int i = 0; i < parameters.size(); i++) {
      mean.get(i).set(moments.get(2 * i));
      variance.get(i).set(moments.get(2 * i + 1));
    }
  }
}
