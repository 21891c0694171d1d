package io.dynnibal.search;

import io.dynnibal.data.JsonlCorpus;
import io.dynnibal.data.TargetText;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.negatives.FullDimensionPool;
import io.dynnibal.snapshot.ParameterSnapshots;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Answers text queries with a trained dual encoder: the query tower embeds the query, then either
 * exact search over every target's embedding (a {@link FullDimensionPool}, as the exhaustive
 * sampler scores) or the HNSW graph of an exported index.
 */
public final class Retriever implements AutoCloseable {
  private final DualEncoder encoder;
  private final TargetEmbeddings exact;
  private final FullDimensionPool pool;
  private final LuceneVectorIndex index;

  private Retriever(DualEncoder encoder, TargetEmbeddings exact, LuceneVectorIndex index) {
    this.encoder = encoder;
    this.exact = exact;
    this.pool =
        exact == null
            ? null
            : FullDimensionPool.of(
                exact.targets().stream().map(TargetText::targetId).toList(),
                exact.vectors(),
                encoder.config().outputDim());
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
    return search(embed(query), k);
  }

  /** The query tower's embedding of {@code query}. */
  public float[] embed(String query) {
    return encoder.encodeQueries(List.of(encoder.featurizeQuery(query)))[0];
  }

  /** The best {@code k} targets for an embedded query, best first. */
  public List<Hit> search(float[] query, int k) throws IOException {
    if (index != null) {
      return index.search(query, k);
    }
    FullDimensionPool.TopK top = pool.topK(new float[][] {query}, k);
    List<Hit> hits = new ArrayList<>(top.members()[0].length);
    for (int i = 0; i < top.members()[0].length; i++) {
      TargetText target = exact.targets().get(top.members()[0][i]);
      hits.add(new Hit(target.targetId(), target.text(), top.scores()[0][i]));
    }
    return hits;
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
    if (pool != null) {
      pool.close();
    }
    if (index != null) {
      index.close();
    }
  }
}
