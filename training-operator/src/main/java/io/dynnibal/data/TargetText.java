package io.dynnibal.data;

/** A target of the corpus: its id and the text the target tower encodes. */
public record TargetText(String targetId, String text) {}
