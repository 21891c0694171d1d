/**
 * The paper's baseline negative miners that hold targets at the encoder's full dimension, as a
 * deployment would on the trainer's accelerator: {@link io.dynnibal.negatives.FullDimensionPool}
 * (exhaustive brute force over all targets, and stochastic negative mining over a random fraction)
 * and {@link io.dynnibal.negatives.NegativeCache} (a FIFO of recently trained targets, Lindgren et
 * al. 2021). DyNNIBAL itself (SG tree, Nyström cache, MH and rejection sampling) lives in {@code
 * io.dynnibal.index}.
 */
package io.dynnibal.negatives;
