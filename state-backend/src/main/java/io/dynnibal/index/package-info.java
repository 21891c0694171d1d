/**
 * The dynamic index of the paper as plain Java (no Flink operator API, no DJL): SG tree, FindClustering,
 * Metropolis-Hastings and rejection samplers, Nystrom caches, approximate re-encoding and tree repair.
 *
 * <p>Filled by the index-core and Nystrom/maintenance issues; the foundation only fixes the module and its place
 * in the build (it may depend on {@code schemas}, nothing heavier).
 */
package io.dynnibal.index;
