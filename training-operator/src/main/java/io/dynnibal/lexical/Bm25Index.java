package io.dynnibal.lexical;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.ByteBuffersDirectory;

/**
 * An in-memory BM25 index of target texts that targets join and leave at any time: Lucene's {@link
 * BM25Similarity} (k1 = {@value #K1}, b = {@value #B}) over texts analysed with its {@link
 * StandardAnalyzer} (Unicode word breaks, lower case, no stop words). A query's words are its
 * clauses, each optional.
 *
 * <p>Invariant: a search sees every {@link #upsert} and {@link #delete} made before it (the reader
 * is reopened from the writer when anything changed), and an id is held at most once, with the text
 * of its last upsert. Not thread-safe.
 */
public final class Bm25Index implements AutoCloseable {
  public static final float K1 = 1.2f;
  public static final float B = 0.75f;
  private static final String ID = "id";
  private static final String TEXT = "text";

  /** A target and its BM25 score for a query. */
  public record Hit(String id, float score) {}

  private final Analyzer analyzer = new StandardAnalyzer();
  private final ByteBuffersDirectory directory = new ByteBuffersDirectory();
  private final IndexWriter writer;
  private DirectoryReader reader;
  private IndexSearcher searcher;
  private boolean changed = true;

  public Bm25Index() {
    try {
      writer =
          new IndexWriter(directory, new IndexWriterConfig(analyzer).setSimilarity(similarity()));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open an in-memory BM25 index", e);
    }
  }

  private static BM25Similarity similarity() {
    return new BM25Similarity(K1, B);
  }

  /** Adds target {@code id} with {@code text}, or replaces its text. */
  public void upsert(String id, String text) {
    Document doc = new Document();
    doc.add(new StringField(ID, id, Field.Store.YES));
    doc.add(new TextField(TEXT, text, Field.Store.NO));
    try {
      writer.updateDocument(new Term(ID, id), doc);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot index target " + id + " for BM25", e);
    }
    changed = true;
  }

  /** Removes target {@code id} (nothing when it is not held). */
  public void delete(String id) {
    try {
      writer.deleteDocuments(new Term(ID, id));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove target " + id + " from the BM25 index", e);
    }
    changed = true;
  }

  /** Targets held. */
  public int size() {
    return current().getIndexReader().numDocs();
  }

  /** The best {@code k} targets for {@code query}, best first (ties in index order). */
  public List<Hit> search(String query, int k) {
    IndexSearcher s = current();
    try {
      ScoreDoc[] docs = s.search(query(query), Math.max(1, k)).scoreDocs;
      List<Hit> hits = new ArrayList<>(docs.length);
      for (ScoreDoc sd : docs) {
        hits.add(new Hit(s.storedFields().document(sd.doc).get(ID), sd.score));
      }
      return hits;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A searcher that sees every change so far. */
  private IndexSearcher current() {
    if (!changed) {
      return searcher;
    }
    try {
      if (reader == null) {
        reader = DirectoryReader.open(writer);
      } else {
        DirectoryReader newer = DirectoryReader.openIfChanged(reader, writer);
        if (newer != null) {
          reader.close();
          reader = newer;
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot reopen the BM25 index", e);
    }
    searcher = new IndexSearcher(reader);
    searcher.setSimilarity(similarity());
    changed = false;
    return searcher;
  }

  private BooleanQuery query(String text) throws IOException {
    BooleanQuery.Builder query = new BooleanQuery.Builder();
    int clauses = 0;
    try (TokenStream tokens = analyzer.tokenStream(TEXT, text)) {
      CharTermAttribute term = tokens.addAttribute(CharTermAttribute.class);
      tokens.reset();
      while (tokens.incrementToken() && clauses < IndexSearcher.getMaxClauseCount()) {
        query.add(new TermQuery(new Term(TEXT, term.toString())), BooleanClause.Occur.SHOULD);
        clauses++;
      }
      tokens.end();
    }
    return query.build();
  }

  @Override
  public void close() {
    try {
      if (reader != null) {
        reader.close();
      }
      writer.close();
      directory.close();
      analyzer.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
