package io.dynnibal.eval;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StoredField;
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
 * The lexical baseline every trained model is shown next to: BM25 (k1 = {@value #K1}, b = {@value
 * #B}, Lucene's {@link BM25Similarity}) over an in-memory index of the targets' texts, analysed
 * with Lucene's {@link StandardAnalyzer} (Unicode word breaks, lower case, no stop words). A
 * query's words are its clauses, each optional. Ranks beyond the deepest cut-off reported count as
 * misses; ties keep the index order.
 */
public final class Bm25Baseline implements AutoCloseable {
  public static final float K1 = 1.2f;
  public static final float B = 0.75f;
  private static final String ID = "id";
  private static final String TEXT = "text";

  private final Analyzer analyzer = new StandardAnalyzer();
  private final ByteBuffersDirectory directory = new ByteBuffersDirectory();
  private final DirectoryReader reader;
  private final IndexSearcher searcher;
  private final Set<String> targetIds = new HashSet<>();

  private Bm25Baseline(List<TargetText> targets) throws IOException {
    IndexWriterConfig config = new IndexWriterConfig(analyzer).setSimilarity(similarity());
    try (IndexWriter writer = new IndexWriter(directory, config)) {
      for (TargetText t : targets) {
        Document doc = new Document();
        doc.add(new StoredField(ID, t.targetId()));
        doc.add(new TextField(TEXT, t.text(), Field.Store.NO));
        writer.addDocument(doc);
      }
    }
    this.reader = DirectoryReader.open(directory);
    this.searcher = new IndexSearcher(reader);
    this.searcher.setSimilarity(similarity());
    targets.forEach(t -> targetIds.add(t.targetId()));
  }

  public static Bm25Baseline of(List<TargetText> targets) {
    try {
      return new Bm25Baseline(targets);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot index the targets for BM25", e);
    }
  }

  private static BM25Similarity similarity() {
    return new BM25Similarity(K1, B);
  }

  /** The best {@code k} target ids for a query, best first. */
  public List<String> search(String query, int k) {
    try {
      List<String> ids = new ArrayList<>(k);
      for (ScoreDoc sd : searcher.search(query(query), k).scoreDocs) {
        ids.add(searcher.storedFields().document(sd.doc).get(ID));
      }
      return ids;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** R@k and MRR@k of BM25 on {@code queries}, as {@link RetrievalEvaluator} reports a model's. */
  public RetrievalMetrics evaluate(List<LabelledQuery> queries) {
    long start = System.nanoTime();
    int depth =
        IntStream.concat(
                IntStream.of(RetrievalMetrics.RECALL_AT), IntStream.of(RetrievalMetrics.MRR_AT))
            .max()
            .orElseThrow();
    long[] ranks = new long[queries.size()];
    for (int i = 0; i < queries.size(); i++) {
      LabelledQuery q = queries.get(i);
      if (!targetIds.contains(q.targetId())) {
        ranks[i] = Long.MAX_VALUE;
        continue;
      }
      int rank = search(q.text(), depth).indexOf(q.targetId());
      // Not among BM25's results (no shared word, or deeper than any cut-off): a miss at every k.
      ranks[i] = rank < 0 ? Long.MAX_VALUE - 1 : rank;
    }
    return RetrievalEvaluator.summarize(ranks, reader.numDocs(), (System.nanoTime() - start) / 1e9);
  }

  /** The same, for a targets list. */
  public static RetrievalMetrics evaluate(List<TargetText> targets, List<LabelledQuery> queries) {
    try (Bm25Baseline bm25 = of(targets)) {
      return bm25.evaluate(queries);
    }
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
      reader.close();
      directory.close();
      analyzer.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
