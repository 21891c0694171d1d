/**
 * The dynamic index of the paper as plain Java (no Flink, no DJL; the keyed-state layer over it is
 * {@code io.dynnibal.state}).
 *
 * <ul>
 *   <li>{@link io.dynnibal.index.sgtree}: the SG tree over cached target vectors (bulk build,
 *       insert, delete, invariants) and exact / beam k-NN over it.
 *   <li>{@link io.dynnibal.index.sampling}: FindClustering (Alg. 2), the cluster proposal Q (Eq.
 *       6), the Metropolis-Hastings and exact rejection samplers (Alg. 1), and the forest of trees.
 *   <li>{@link io.dynnibal.index.nystrom}: the Nyström projector into the d'-dimensional cache, the
 *       low-rank re-encoding regression (Alg. 4/5) and the cache map it yields.
 * </ul>
 *
 * {@link io.dynnibal.index.ClusteredVectors} makes synthetic targets shaped like embeddings, for
 * this module's tests and the benchmarks module.
 *
 * <p>Distances in the tree are Euclidean; scores are inner products {@code beta * <x, y>}. Every
 * sampler bound uses Cauchy-Schwarz, {@code |<x, y> - <x, r>| <= |x| * |y - r|}, so queries need
 * not be unit-norm.
 */
package io.dynnibal.index;
