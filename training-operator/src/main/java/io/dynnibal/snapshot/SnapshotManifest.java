package io.dynnibal.snapshot;

import io.dynnibal.model.DualEncoderConfig;
import java.util.List;
import java.util.Map;

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
 * @param files every other file of the snapshot, by name, with its size and checksum (null in
 *     format 1, which recorded none)
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
    long createdMs,
    Map<String, FileChecksum> files) {
  public static final String FORMAT = "dynnibal-dual-encoder";

  /** The layout this build writes: 2 adds {@link #files} and {@code manifest.crc32c}. */
  public static final int FORMAT_VERSION = 2;

  /** The oldest layout this build reads. */
  public static final int OLDEST_FORMAT_VERSION = 1;

  /** Size and CRC-32C (8 lower-case hexadecimal digits) of one file. */
  public record FileChecksum(long bytes, String crc32c) {}
}
