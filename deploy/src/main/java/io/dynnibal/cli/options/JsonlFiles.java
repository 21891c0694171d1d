package io.dynnibal.cli.options;

/**
 * The descriptions of the corpus file options, shared by every command that reads them so that
 * {@code --targets}, {@code --train}, {@code --pairs} and {@code --eval} mean the same file format
 * everywhere. Every file is JSON Lines, gzip-compressed or plain.
 */
public final class JsonlFiles {
  /** {@code --targets}: one target per line. */
  public static final String TARGETS = "Targets JSONL (gz or plain): {target_id, target_text}.";

  /** {@code --train} / {@code --pairs}: one labelled query per line. */
  public static final String PAIRS =
      "Training pairs JSONL (gz or plain): {query_id, query_text, target_id}.";

  /** {@code --eval}: evaluation queries, in the training pairs' format. */
  public static final String EVAL =
      "Evaluation queries JSONL (gz or plain): {query_id, query_text, target_id}.";

  private JsonlFiles() {}
}
