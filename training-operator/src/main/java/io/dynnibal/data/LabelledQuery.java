package io.dynnibal.data;

/** A training or evaluation pair: a query and the id of its one relevant target. */
public record LabelledQuery(String queryId, String text, String targetId) {}
