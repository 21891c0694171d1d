package io.dynnibal.snapshot;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.SparseEmbeddingTable;
import io.dynnibal.model.Tower;
import io.dynnibal.snapshot.SnapshotManifest.FileChecksum;
import io.dynnibal.training.DualEncoderTrainer;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * The files of a parameter snapshot, by name in writing order, as writers that serialise nothing
 * until asked: per tower its table and network (with optimiser state, their Adam moments), then
 * {@value #MANIFEST}, which records every earlier file's size and checksum, then {@code
 * manifest.crc32c}. A directory snapshot and a checkpoint stream are both made of these.
 */
final class SnapshotFiles {
  static final String MANIFEST = "manifest.json";
  private static final ObjectMapper JSON = new ObjectMapper();

  private SnapshotFiles() {}

  /** Writes one file's bytes. */
  interface FileContent {
    void writeTo(java.nio.channels.WritableByteChannel channel) throws IOException;
  }

  /**
   * Every file of a snapshot, in a stable order, as writers (nothing is serialised until asked).
   */
  static Map<String, FileContent> of(
      DualEncoder encoder, DualEncoderTrainer trainer, long version, long seed) {
    Map<String, FileContent> files = new java.util.LinkedHashMap<>();
    Map<String, FileChecksum> checksums = new java.util.TreeMap<>();
    List<String> names = towerNames(encoder);
    List<Tower> towers = encoder.distinctTowers();
    List<List<float[]>> networkMoments = trainer == null ? null : trainer.networkMoments();
    for (int i = 0; i < towers.size(); i++) {
      Tower tower = towers.get(i);
      String name = names.get(i);
      files.put(
          name + ".table",
          channel -> FloatArrayFile.write(channel, List.of(tower.table().values())));
      files.put(
          name + ".network",
          channel -> {
            DataOutputStream out =
                new DataOutputStream(
                    new BufferedOutputStream(java.nio.channels.Channels.newOutputStream(channel)));
            tower.body().saveParameters(out);
            out.flush();
          });
      if (trainer != null) {
        SparseEmbeddingTable table = tower.table();
        float[] zeros = table.mean() == null ? new float[table.values().length] : null;
        float[] updates = table.mean() == null ? new float[table.rows()] : table.updateCounts();
        files.put(
            name + ".table.adam",
            channel ->
                FloatArrayFile.write(
                    channel,
                    List.of(
                        zeros != null ? zeros : table.mean(),
                        zeros != null ? zeros : table.variance(),
                        updates)));
        List<float[]> moments = networkMoments.get(i);
        files.put(name + ".network.adam", channel -> FloatArrayFile.write(channel, moments));
      }
    }
    // Every data file is written before the manifest, which records their checksums.
    files.replaceAll((name, content) -> SnapshotChecksums.recording(name, content, checksums));
    long createdMs = System.currentTimeMillis();
    byte[][] manifestBytes = new byte[1][];
    files.put(
        MANIFEST,
        channel -> {
          SnapshotManifest manifest =
              new SnapshotManifest(
                  SnapshotManifest.FORMAT,
                  SnapshotManifest.FORMAT_VERSION,
                  version,
                  trainer == null ? 0 : trainer.step(),
                  seed,
                  encoder.config(),
                  names,
                  trainer != null,
                  createdMs,
                  new java.util.TreeMap<>(checksums));
          manifestBytes[0] = JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(manifest);
          writeFully(channel, manifestBytes[0]);
        });
    files.put(
        SnapshotChecksums.MANIFEST_CHECKSUM,
        channel ->
            writeFully(
                channel,
                (SnapshotChecksums.checksum(manifestBytes[0]).crc32c() + "\n")
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
    return files;
  }

  private static void writeFully(java.nio.channels.WritableByteChannel channel, byte[] bytes)
      throws IOException {
    java.nio.ByteBuffer buffer = java.nio.ByteBuffer.wrap(bytes);
    while (buffer.hasRemaining()) {
      channel.write(buffer);
    }
  }

  private static List<String> towerNames(DualEncoder encoder) {
    return encoder.config().sharedTowers() ? List.of("shared") : List.of("query", "target");
  }
}
