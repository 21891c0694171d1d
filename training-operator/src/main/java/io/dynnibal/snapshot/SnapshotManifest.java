package io.dynnibal.snapshot;

import io.dynnibal.model.DualEncoderConfig;
import java.util.List;

/**
 * {@code manifest.json} of a parameter snapshot: what the files are and the model they make.
 *
 * @param format always {@value #FORMAT}
 * @param formatVersion the layout version; readers refuse versions they do not know
 * @param version the model version (model updates carry it; increasing)
 * @param step the trainer's step when written
 * @param towers tower names in file order ("shared", or "query" and "target")
 * @param optimizerState whether Adam's moments are included (needed to resume training, not to
 *     encode)
 */
public record SnapshotManifest(
    String format,
    int formatVersion,
    long version,
    int step,
    long seed,
    DualEncoderConfig config,
    List<String> towers,
    boolean optimizerState,
    long createdMs) {
  public static final String FORMAT = "dynnibal-dual-encoder";
  public static final int FORMAT_VERSION = 1;
}
