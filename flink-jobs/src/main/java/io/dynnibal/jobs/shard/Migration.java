package io.dynnibal.jobs.shard;

import io.dynnibal.schemas.ModelUpdate;

/**
 * How a shard key moves its cache to a model update's version: by the update's approximate
 * re-encoding (the paper's ApproximateReEncode: one d'xd' map of every cached vector, the SG tree
 * moved in place and repaired by UpdateSGTree), by the encoder itself (every target re-encoded
 * exactly, the tree rebuilt), or by the map first and exactly afterwards.
 */
enum Migration {
  /** By the update's map. */
  MAP,
  /** By the map at once, then every target re-encoded exactly, a group per batch. */
  MAP_THEN_EXACT,
  /** Every target re-encoded exactly before the next batch, and the tree rebuilt. */
  EXACT;

  /**
   * A map moves the cache of one version ({@code map_from}, by default v-1): a shard holding any
   * other (it missed an update, or took one of a branch a restore discarded) has no map that leads
   * to the update and re-encodes exactly at once. An update the trainer marked exact (its map was
   * unfaithful, or the landmarks are new) is applied by its map first and re-encoded exactly group
   * by group, unless {@code reencode.exact.per.batch} is 0.
   */
  static Migration of(ModelUpdate update, long currentVersion, int exactPerBatch) {
    long from = update.getMapFrom() != null ? update.getMapFrom() : update.getVersion() - 1;
    if (from != currentVersion) {
      return EXACT;
    }
    if (!update.getReencodeExactly()) {
      return MAP;
    }
    return exactPerBatch > 0 ? MAP_THEN_EXACT : EXACT;
  }
}
