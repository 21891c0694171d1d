package io.dynnibal.model.graph;

import ai.djl.ndarray.NDArray;

/**
 * Arithmetic with a constant for arrays that may record gradients, in place of DJL's {@code
 * mul(Number)}, {@code div(Number)} and {@code maximum(Number)}.
 *
 * <p>Why: DJL's PyTorch engine turns the constant into a 0-d tensor over a Java direct buffer
 * ({@code from_blob}, no copy) and closes that array as soon as the operation returns. libtorch's
 * autograd keeps the operand for the backward pass ({@code mul}, {@code div} and {@code maximum}
 * all save it), so the backward pass reads the buffer after Java let go of it; once a garbage
 * collection has freed it, the gradient is scaled by whatever the memory holds by then: a NaN
 * gradient, or a silently wrong step size when the freed bytes are finite.
 *
 * <p>Invariant: the constant here is an array of {@code x}'s manager, so it lives until that
 * manager closes; a training step's arrays belong to the step's scope, which closes after the
 * backward pass.
 */
public final class GraphScalars {
  private GraphScalars() {}

  /** {@code x * value}. */
  public static NDArray times(NDArray x, float value) {
    return x.mul(held(x, value));
  }

  /** {@code x / value}. */
  public static NDArray dividedBy(NDArray x, float value) {
    return x.div(held(x, value));
  }

  /** {@code max(x, value)}, element-wise. */
  public static NDArray atLeast(NDArray x, float value) {
    return x.maximum(held(x, value));
  }

  private static NDArray held(NDArray x, float value) {
    return x.getManager().create(value);
  }
}
