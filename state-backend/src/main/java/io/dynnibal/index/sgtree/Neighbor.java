package io.dynnibal.index.sgtree;

/** A target and its score under a {@link Similarity} (larger is better). */
public record Neighbor(int target, double score) {}
