/**
 * The negative samplers of the paper's comparison, one class each, found by name in {@link
 * io.dynnibal.sampler.Samplers}: {@link io.dynnibal.sampler.InBatch}, {@link
 * io.dynnibal.sampler.Uniform}, {@link io.dynnibal.sampler.StochasticNegativeMining}, {@link
 * io.dynnibal.sampler.NegativeCacheSampler}, {@link io.dynnibal.sampler.Exhaustive}, {@link
 * io.dynnibal.sampler.DynnibalMh} and {@link io.dynnibal.sampler.DynnibalRejection}.
 *
 * <p>A sampler declares its own settings (a nested {@code Settings} group that {@link
 * io.dynnibal.sampler.SamplerSettings} holds), its dose per step, the shard building block it mines
 * with ({@link io.dynnibal.sampler.ShardMiners}), what the trainer finds itself ({@link
 * io.dynnibal.sampler.TrainerNegatives}) and what a deployment holds on the accelerator for it
 * ({@link io.dynnibal.sampler.MiningFloats}, the paper's Mem %). No code outside this package
 * branches on a sampler's name: adding a sampler is a class here, a line in the registry, and its
 * test.
 */
package io.dynnibal.sampler;
