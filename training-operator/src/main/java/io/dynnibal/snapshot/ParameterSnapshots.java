package io.dynnibal.snapshot;

import ai.djl.Device;
import ai.djl.MalformedModelException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.SparseEmbeddingTable;
import io.dynnibal.model.TorchRuntime;
import io.dynnibal.model.Tower;
import io.dynnibal.snapshot.SnapshotManifest.FileChecksum;
import io.dynnibal.training.DualEncoderTrainer;
import io.dynnibal.training.TrainerConfig;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Versioned parameter snapshots of a dual encoder in a directory {@code <base>/model-<version>/}:
 * {@code manifest.json}, per tower the embedding table ({@code <tower>.table}, float-array file
 * with checksum) and the network ({@code <tower>.network}, DJL's parameter format), and with
 * optimiser state the Adam moments ({@code <tower>.table.adam}, {@code <tower>.network.adam}).
 *
 * <p>A snapshot appears atomically (written to a hidden temporary directory, then renamed) and is
 * never overwritten, so a reader that sees {@code model-<version>} sees all of it. Locations are
 * {@code file:} URIs or plain paths; on a cluster, a filesystem every TaskManager mounts.
 */
public final class ParameterSnapshots {
  private static final ObjectMapper JSON = new ObjectMapper();

  private ParameterSnapshots() {}

  /** Where model {@code version} lives under {@code base}. */
  public static URI locate(URI base, long version) {
    return toPath(base).resolve(String.format("model-%012d", version)).toUri();
  }

  /**
   * Writes the trainer's encoder and optimiser state as model {@code version}.
   *
   * @return the snapshot's URI
   */
  public static URI write(DualEncoderTrainer trainer, URI base, long version, long seed) {
    return write(trainer.encoder(), trainer, base, version, seed);
  }

  /** Writes the encoder's parameters only (enough to encode, not to resume training). */
  public static URI write(DualEncoder encoder, URI base, long version, long seed) {
    return write(encoder, null, base, version, seed);
  }

  private static URI write(
      DualEncoder encoder, DualEncoderTrainer trainer, URI base, long version, long seed) {
    Path target = toPath(locate(base, version));
    if (Files.exists(target)) {
      throw new SnapshotExistsException(target);
    }
    Path temporary =
        target.resolveSibling(".tmp-" + target.getFileName() + "-" + System.nanoTime());
    try {
      Files.createDirectories(temporary);
      for (var file : SnapshotFiles.of(encoder, trainer, version, seed).entrySet()) {
        try (var channel =
            java.nio.channels.FileChannel.open(
                temporary.resolve(file.getKey()),
                java.nio.file.StandardOpenOption.CREATE_NEW,
                java.nio.file.StandardOpenOption.WRITE)) {
          file.getValue().writeTo(channel);
          channel.force(true);
        }
      }
      Directories.sync(temporary);
      try {
        Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE);
      } catch (FileAlreadyExistsException | DirectoryNotEmptyException taken) {
        // Another writer renamed its copy of this version in first.
        deleteQuietly(temporary);
        throw new SnapshotExistsException(target);
      }
      Directories.sync(target.getParent());
      return target.toUri();
    } catch (IOException e) {
      deleteQuietly(temporary);
      throw new UncheckedIOException(
          "could not write snapshot " + target + ": " + e.getMessage(), e);
    }
  }

  /**
   * Streams a snapshot of the trainer, optimiser state included, into {@code out} (flushed, not
   * closed): what the trainer writes into a Flink checkpoint. Nothing is copied in memory on the
   * way; {@link #readTrainer(InputStream, TrainerConfig)} reads it back.
   */
  public static void writeTrainer(
      DualEncoderTrainer trainer, long version, long seed, OutputStream out) throws IOException {
    SnapshotStream.write(SnapshotFiles.of(trainer.encoder(), trainer, version, seed), out);
  }

  /**
   * A trainer from a stream {@link #writeTrainer(DualEncoderTrainer, long, long, OutputStream)}
   * made (unpacked to a temporary directory and read as a snapshot).
   */
  public static DualEncoderTrainer readTrainer(InputStream in, TrainerConfig config) {
    return readUnpacked(dir -> SnapshotStream.unpack(in, dir), config);
  }

  /**
   * A trainer from a snapshot's files held in memory (name -> bytes), as checkpoints from before
   * {@link #writeTrainer(DualEncoderTrainer, long, long, OutputStream)} carried them.
   */
  public static DualEncoderTrainer readTrainer(Map<String, byte[]> files, TrainerConfig config) {
    return readUnpacked(
        dir -> {
          for (var file : files.entrySet()) {
            Files.write(dir.resolve(file.getKey()), file.getValue());
          }
        },
        config);
  }

  /** Writes a snapshot's files into a temporary directory, reads the trainer, deletes them. */
  private static DualEncoderTrainer readUnpacked(Unpack unpack, TrainerConfig config) {
    Path scratch = null;
    try {
      scratch = Files.createTempDirectory("dynnibal-restore-");
      Path dir = Files.createDirectories(scratch.resolve("snapshot"));
      unpack.into(dir);
      return readTrainer(dir.toUri(), config);
    } catch (IOException e) {
      throw new UncheckedIOException("could not restore the trainer: " + e.getMessage(), e);
    } finally {
      if (scratch != null) {
        deleteQuietly(scratch);
      }
    }
  }

  private interface Unpack {
    void into(Path dir) throws IOException;
  }

  /** The manifest of the snapshot at {@code uri}. */
  public static SnapshotManifest manifest(URI uri) {
    Path dir = toPath(uri);
    Path file = dir.resolve(SnapshotFiles.MANIFEST);
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException("no snapshot at " + uri + " (" + file + " is missing)");
    }
    try {
      byte[] bytes = Files.readAllBytes(file);
      SnapshotChecksums.verifyManifest(file, bytes);
      SnapshotManifest manifest = JSON.readValue(bytes, SnapshotManifest.class);
      if (!SnapshotManifest.FORMAT.equals(manifest.format())) {
        throw new IllegalArgumentException(
            uri + " is not a dual-encoder snapshot (format " + manifest.format() + ")");
      }
      if (manifest.formatVersion() < SnapshotManifest.OLDEST_FORMAT_VERSION
          || manifest.formatVersion() > SnapshotManifest.FORMAT_VERSION) {
        throw new IllegalArgumentException(
            uri
                + " has snapshot format version "
                + manifest.formatVersion()
                + "; this build reads versions "
                + SnapshotManifest.OLDEST_FORMAT_VERSION
                + " to "
                + SnapshotManifest.FORMAT_VERSION);
      }
      return manifest;
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "unreadable snapshot manifest " + file + ": " + e.getMessage(), e);
    }
  }

  /** The encoder of the snapshot at {@code uri}, on the training device. */
  public static DualEncoder readEncoder(URI uri) {
    return readEncoder(uri, TorchRuntime.trainingDevice());
  }

  public static DualEncoder readEncoder(URI uri, Device device) {
    SnapshotManifest manifest = manifest(uri);
    return load(toPath(uri), manifest, device);
  }

  /**
   * A trainer that continues exactly where the one that wrote the snapshot stopped (same next
   * step).
   */
  public static DualEncoderTrainer readTrainer(URI uri, TrainerConfig config) {
    SnapshotManifest manifest = manifest(uri);
    if (!manifest.optimizerState()) {
      throw new IllegalArgumentException(
          "snapshot " + uri + " has no optimiser state; it can encode but not resume");
    }
    Path dir = toPath(uri);
    DualEncoder encoder = load(dir, manifest, TorchRuntime.trainingDevice());
    try {
      DualEncoderTrainer trainer = new DualEncoderTrainer(encoder, config);
      List<List<float[]>> networkMoments = new ArrayList<>();
      List<Tower> towers = encoder.distinctTowers();
      for (int i = 0; i < towers.size(); i++) {
        String name = manifest.towers().get(i);
        List<float[]> tableMoments =
            FloatArrayFile.read(verified(dir, manifest, name + ".table.adam"));
        // Snapshots from before per-row bias correction hold two arrays (no update counts).
        towers
            .get(i)
            .table()
            .restoreMoments(
                tableMoments.get(0),
                tableMoments.get(1),
                tableMoments.size() > 2 ? tableMoments.get(2) : null,
                manifest.step());
        networkMoments.add(FloatArrayFile.read(verified(dir, manifest, name + ".network.adam")));
      }
      trainer.restore(manifest.step(), networkMoments);
      return trainer;
    } catch (IOException | RuntimeException e) {
      encoder.close();
      throw e instanceof IOException io
          ? new UncheckedIOException("could not read " + uri + ": " + e.getMessage(), io)
          : (RuntimeException) e;
    }
  }

  private static DualEncoder load(Path dir, SnapshotManifest manifest, Device device) {
    DualEncoderConfig config = manifest.config();
    List<String> expected = config.sharedTowers() ? List.of("shared") : List.of("query", "target");
    if (!expected.equals(manifest.towers())) {
      throw new IllegalArgumentException(
          dir + ": towers " + manifest.towers() + " do not match the config " + expected);
    }
    try {
      List<SparseEmbeddingTable> tables = new ArrayList<>();
      for (String name : expected) {
        float[] values = FloatArrayFile.read(verified(dir, manifest, name + ".table")).get(0);
        tables.add(
            SparseEmbeddingTable.of(config.features().buckets(), config.embeddingDim(), values));
      }
      DualEncoder encoder = DualEncoder.withTables(config, device, manifest.seed(), tables);
      try {
        List<Tower> towers = encoder.distinctTowers();
        for (int i = 0; i < towers.size(); i++) {
          try (DataInputStream in =
              new DataInputStream(
                  new BufferedInputStream(
                      Files.newInputStream(
                          verified(dir, manifest, expected.get(i) + ".network"))))) {
            towers.get(i).body().loadParameters(encoder.manager(), in);
          }
          towers.get(i).markTrainable();
        }
        return encoder;
      } catch (IOException | MalformedModelException | RuntimeException e) {
        encoder.close();
        throw e;
      }
    } catch (IOException | MalformedModelException e) {
      throw new UncheckedIOException(
          "could not read snapshot " + dir + ": " + e.getMessage(),
          e instanceof IOException io ? io : new IOException(e));
    }
  }

  /**
   * {@code dir}'s file {@code name}, once its bytes match the manifest's checksum (format 1
   * recorded none).
   *
   * @throws IllegalArgumentException naming the file when they do not
   */
  private static Path verified(Path dir, SnapshotManifest manifest, String name)
      throws IOException {
    Path file = dir.resolve(name);
    if (manifest.files() != null) {
      FileChecksum expected = manifest.files().get(name);
      if (expected == null) {
        throw new SnapshotChecksums.CorruptSnapshotException(
            dir + ": the manifest records no " + name);
      }
      SnapshotChecksums.verify(file, expected);
    }
    return file;
  }

  /** A {@code file:} URI, or a URI without scheme taken as a local path. */
  public static Path toPath(URI uri) {
    if (uri.getScheme() == null) {
      return Path.of(uri.getPath()).toAbsolutePath();
    }
    if (!"file".equals(uri.getScheme())) {
      throw new IllegalArgumentException(
          "snapshot location "
              + uri
              + ": only file: URIs are supported; mount shared"
              + " storage (NFS, a Kubernetes volume) on every TaskManager and use its path");
    }
    return Path.of(uri);
  }

  /** Parses a user's location: a URI with a scheme, or a path. */
  public static URI parse(String location) {
    if (location.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*") && !location.matches("^[a-zA-Z]:\\\\.*")) {
      return URI.create(location);
    }
    return Path.of(location).toAbsolutePath().toUri();
  }

  private static void deleteQuietly(Path dir) {
    try {
      Directories.deleteRecursively(dir);
    } catch (IOException | UncheckedIOException ignored) {
      // best effort: a leftover hidden temporary directory is harmless
    }
  }
}
