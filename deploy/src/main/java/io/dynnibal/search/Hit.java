package io.dynnibal.search;

/** One search result: a target and its score {@code <q, t>} (towers are unit norm: a cosine). */
public record Hit(String targetId, String text, double score) {}
