package io.dynnibal.stream;

/**
 * B training pairs, numbered in arrival order: the unit that fans out to every shard and becomes
 * one step.
 */
public class QueryBatch {
  public long batchId;
  public String[] pairIds;
  public String[] queryTexts;
  public String[] targetIds;

  public QueryBatch() {}

  public int size() {
    return pairIds.length;
  }
}
