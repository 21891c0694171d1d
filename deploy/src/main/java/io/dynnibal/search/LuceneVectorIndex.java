package io.dynnibal.search;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.snapshot.ParameterSnapshots;
import io.dynnibal.snapshot.SnapshotManifest;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;

/**
 * An exported retriever: {@code index/}, a Lucene 9 index with one document per target ({@value
 * #ID} and {@value #TEXT} stored, its embedding in the HNSW field {@value #VECTOR} with dot-product
 * similarity: the towers' scores on unit vectors), and {@code model/}, the snapshot whose query
 * tower embeds the queries. Lucene, OpenSearch or Elasticsearch-style tooling can open the index.
 */
public final class LuceneVectorIndex implements AutoCloseable {
  public static final String ID = "target_id";
  public static final String TEXT = "target_text";
  public static final String VECTOR = "embedding";
  static final String INDEX_DIR = "index";
  static final String MODEL_DIR = "model";

  private final DirectoryReader reader;
  private final IndexSearcher searcher;

  private LuceneVectorIndex(DirectoryReader reader) {
    this.reader = reader;
    this.searcher = new IndexSearcher(reader);
  }

  /**
   * Writes {@code out/index} from the embeddings and the encoder that made them, without optimiser
   * state, to {@code out/model}.
   */
  public static void write(
      Path out, TargetEmbeddings embeddings, DualEncoder encoder, SnapshotManifest made)
      throws IOException {
    if (Files.exists(out) && !isEmptyDirectory(out)) {
      throw new IOException(out + " exists and is not empty: export writes a new directory");
    }
    try (Directory dir = FSDirectory.open(out.resolve(INDEX_DIR));
        IndexWriter writer = new IndexWriter(dir, new IndexWriterConfig())) {
      for (int i = 0; i < embeddings.vectors().length; i++) {
        Document doc = new Document();
        doc.add(new StringField(ID, embeddings.targets().get(i).targetId(), Field.Store.YES));
        doc.add(new StoredField(TEXT, embeddings.targets().get(i).text()));
        doc.add(
            new KnnFloatVectorField(
                VECTOR, embeddings.vectors()[i], VectorSimilarityFunction.DOT_PRODUCT));
        writer.addDocument(doc);
      }
      writer.forceMerge(1); // one HNSW graph: searches need not merge segments' results
    }
    ParameterSnapshots.write(encoder, out.resolve(MODEL_DIR).toUri(), made.version(), made.seed());
  }

  public static LuceneVectorIndex open(Path exported) throws IOException {
    return new LuceneVectorIndex(
        DirectoryReader.open(FSDirectory.open(exported.resolve(INDEX_DIR))));
  }

  /** The snapshot exported with the index (its query tower embeds queries). */
  public static URI model(Path exported) throws IOException {
    try (Stream<Path> versions = Files.list(exported.resolve(MODEL_DIR))) {
      List<Path> found = versions.filter(Files::isDirectory).toList();
      if (found.size() != 1) {
        throw new IOException(
            exported + "/" + MODEL_DIR + " should hold one model version, holds " + found.size());
      }
      return found.get(0).toUri();
    }
  }

  /** Candidates the HNSW search keeps at least (Lucene's k, the beam): recall against speed. */
  static final int CANDIDATES = 100;

  /**
   * Approximate top {@code k} by HNSW, searched with at least {@value #CANDIDATES} candidates;
   * scores converted back to {@code <q, t>}.
   */
  public List<Hit> search(float[] query, int k) throws IOException {
    int candidates = Math.max(k, CANDIDATES);
    TopDocs top = searcher.search(new KnnFloatVectorQuery(VECTOR, query, candidates), candidates);
    List<Hit> hits = new ArrayList<>();
    for (ScoreDoc sd : top.scoreDocs) {
      if (hits.size() == k) {
        break;
      }
      Document doc = searcher.storedFields().document(sd.doc);
      // Lucene scores dot products of unit vectors as (1 + dot) / 2.
      hits.add(new Hit(doc.get(ID), doc.get(TEXT), 2.0 * sd.score - 1.0));
    }
    return hits;
  }

  public int size() {
    return reader.numDocs();
  }

  @Override
  public void close() throws IOException {
    reader.close();
  }

  private static boolean isEmptyDirectory(Path p) throws IOException {
    if (!Files.isDirectory(p)) {
      return false;
    }
    try (Stream<Path> s = Files.list(p)) {
      return s.findAny().isEmpty();
    }
  }
}
