package io.dynnibal.search;

import io.dynnibal.data.TargetText;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.snapshot.FloatArrayFile;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * Every target of a targets file encoded by a snapshot's target tower, in file order. Encoding a
 * corpus takes seconds to minutes, so the vectors are cached next to the snapshot, in {@code
 * search-cache/targets-<sha256 of the file>.f32}: a snapshot directory holds one model version, so
 * the file's digest is the rest of the key.
 */
public record TargetEmbeddings(List<TargetText> targets, float[][] vectors) {
  static final String CACHE_DIR = "search-cache";

  /** Reads the cache when it matches, else encodes and writes it (atomically). */
  public static TargetEmbeddings of(
      DualEncoder encoder, Path snapshotDir, Path targetsFile, List<TargetText> targets)
      throws IOException {
    Path cache = cacheFile(snapshotDir, targetsFile);
    if (Files.exists(cache)) {
      List<float[]> cached = FloatArrayFile.read(cache);
      if (cached.size() == targets.size()) {
        return new TargetEmbeddings(targets, cached.toArray(new float[0][]));
      }
    }
    float[][] vectors =
        encoder.encodeTargets(
            encoder.featurizeTargets(targets.stream().map(TargetText::text).toList()));
    Files.createDirectories(cache.getParent());
    Path partial = Files.createTempFile(cache.getParent(), "targets-", ".partial");
    Files.delete(partial);
    FloatArrayFile.write(partial, List.of(vectors));
    Files.move(partial, cache, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    return new TargetEmbeddings(targets, vectors);
  }

  /** Where the vectors of {@code targetsFile} under this snapshot are cached. */
  static Path cacheFile(Path snapshotDir, Path targetsFile) throws IOException {
    return snapshotDir.resolve(CACHE_DIR).resolve("targets-" + sha256(targetsFile) + ".f32");
  }

  private static String sha256(Path file) throws IOException {
    try (InputStream in =
        new DigestInputStream(Files.newInputStream(file), MessageDigest.getInstance("SHA-256"))) {
      in.transferTo(java.io.OutputStream.nullOutputStream());
      return HexFormat.of()
          .formatHex(((DigestInputStream) in).getMessageDigest().digest())
          .substring(0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
