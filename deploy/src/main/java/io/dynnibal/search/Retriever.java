package io.dynnibal.search;

import io.dynnibal.data.JsonlCorpus;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.snapshot.ParameterSnapshots;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;

/**
 * Answers text queries with a trained dual encoder: the query tower embeds the query, then either
 * exact search over every target's embedding or the HNSW graph of an exported index.
 */
public final class Retriever implements AutoCloseable {
  private final DualEncoder encoder;
  private final TargetEmbeddings exact;
  private final LuceneVectorIndex index;

  private Retriever(DualEncoder encoder, TargetEmbeddings exact, LuceneVectorIndex index) {
    this.encoder = encoder;
    this.exact = exact;
    this.index = index;
  }

  /** Exact search; the targets are encoded once per snapshot and file, then read from a cache. */
  public static Retriever exact(URI snapshot, Path targetsFile) throws IOException {
    DualEncoder encoder = ParameterSnapshots.readEncoder(snapshot);
    try {
      TargetEmbeddings embeddings =
          TargetEmbeddings.of(
              encoder,
              ParameterSnapshots.toPath(snapshot),
              targetsFile,
              JsonlCorpus.readTargets(targetsFile));
      return new Retriever(encoder, embeddings, null);
    } catch (IOException | RuntimeException e) {
      encoder.close();
      throw e;
    }
  }

  /** HNSW search over a directory written by {@code dynnibal export}. */
  public static Retriever exported(Path dir) throws IOException {
    DualEncoder encoder = ParameterSnapshots.readEncoder(LuceneVectorIndex.model(dir));
    try {
      return new Retriever(encoder, null, LuceneVectorIndex.open(dir));
    } catch (IOException | RuntimeException e) {
      encoder.close();
      throw e;
    }
  }

  public List<Hit> search(String query, int k) throws IOException {
    float[] q = encoder.encodeQueries(List.of(encoder.featurize(query)))[0];
    return exact != null ? exact.search(q, k) : index.search(q, k);
  }

  /** The encoder both towers come from. */
  public DualEncoder encoder() {
    return encoder;
  }

  /** The exact retriever's embeddings (null for an exported index). */
  public TargetEmbeddings embeddings() {
    return exact;
  }

  @Override
  public void close() throws IOException {
    encoder.close();
    if (index != null) {
      index.close();
    }
  }
}
