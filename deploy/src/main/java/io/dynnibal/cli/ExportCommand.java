package io.dynnibal.cli;

import io.dynnibal.cli.options.JsonOutput;
import io.dynnibal.cli.options.JsonlFiles;
import io.dynnibal.data.JsonlCorpus;
import io.dynnibal.data.LabelledQuery;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.search.Hit;
import io.dynnibal.search.LuceneVectorIndex;
import io.dynnibal.search.Retriever;
import io.dynnibal.search.TargetEmbeddings;
import io.dynnibal.snapshot.ParameterSnapshots;
import java.net.URI;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code dynnibal export}: a trained retriever as a Lucene vector index plus its query tower. */
@Command(
    name = "export",
    description = {
      "Export a trained retriever as a Lucene index and its query tower, or as a Hugging Face model.",
      "--format lucene (default): a Lucene 9 HNSW index of the target embeddings, and the query tower. --format hf:",
      "a fine-tuned transformer as a Hugging Face / sentence-transformers directory",
      "(config.json, model.safetensors, vocab.txt, pooling and normalisation modules) that",
      "SentenceTransformer(dir) loads, and that model.checkpoint reads back.",
      "The index (dot-product similarity, target_id and target_text stored) goes to --out/index and the snapshot (its",
      "query tower) to --out/model; `dynnibal search --index` reads them. --verify-queries: how often HNSW returns",
      "exactly the top-k of exact search, and the mean overlap."
    })
final class ExportCommand implements Callable<Integer> {
  @Option(
      names = "--snapshot",
      required = true,
      description = "Snapshot directory (a path or file: URI).")
  String snapshot;

  @Option(names = "--targets", description = JsonlFiles.TARGETS + " Required for --format lucene.")
  Path targets;

  @Option(
      names = "--format",
      defaultValue = "lucene",
      description =
          "lucene (default: index and query tower) or hf (a Hugging Face model directory).")
  String format;

  @Spec CommandSpec spec;

  @Option(names = "--out", required = true, description = "A new (or empty) directory.")
  Path out;

  @Option(
      names = "--verify-queries",
      description = "Queries JSONL to compare HNSW with exact search on.")
  Path verifyQueries;

  @Option(
      names = "--verify-limit",
      defaultValue = "200",
      description = "Queries compared, the file's first (default ${DEFAULT-VALUE}).")
  int verifyLimit;

  @Option(
      names = "--k",
      defaultValue = "10",
      description = "Top k compared (default ${DEFAULT-VALUE}).")
  int k;

  @Mixin JsonOutput json;

  @Override
  public Integer call() throws Exception {
    URI uri = ParameterSnapshots.parse(snapshot);
    long start = System.nanoTime();
    Map<String, Object> figures = new LinkedHashMap<>();
    if (format.equals("hf")) {
      try (DualEncoder encoder = ParameterSnapshots.readEncoder(uri)) {
        encoder.exportHuggingFace(out);
      } catch (IllegalArgumentException e) {
        throw new ParameterException(spec.commandLine(), e.getMessage());
      }
      System.err.printf(
          "exported the encoder to %s (load it with SentenceTransformer(\"%s\"))%n", out, out);
      figures.put("format", "hf");
      figures.put("export_seconds", Math.round((System.nanoTime() - start) / 1e8) / 10.0);
      json.print(figures);
      return 0;
    }
    if (!format.equals("lucene")) {
      throw new ParameterException(spec.commandLine(), "--format is lucene or hf");
    }
    if (targets == null) {
      throw new ParameterException(spec.commandLine(), "--format lucene needs --targets");
    }
    try (Retriever exact = Retriever.exact(uri, targets)) {
      TargetEmbeddings embeddings = exact.embeddings();
      LuceneVectorIndex.write(out, embeddings, exact.encoder(), ParameterSnapshots.manifest(uri));
      figures.put("targets", embeddings.vectors().length);
      figures.put("dimension", embeddings.vectors()[0].length);
      figures.put("export_seconds", Math.round((System.nanoTime() - start) / 1e8) / 10.0);
      System.err.printf(
          "exported %,d targets to %s (index/ and model/)%n", embeddings.vectors().length, out);
      if (verifyQueries != null) {
        List<LabelledQuery> queries = JsonlCorpus.readQueries(verifyQueries);
        queries = queries.subList(0, Math.min(verifyLimit, queries.size()));
        int same = 0;
        double overlap = 0;
        // The exported model is a copy of this one: each query is embedded once, searched both
        // ways.
        try (LuceneVectorIndex hnsw = LuceneVectorIndex.open(out)) {
          for (LabelledQuery q : queries) {
            float[] query = exact.embed(q.text());
            Set<String> want = ids(exact.search(query, k));
            Set<String> got = ids(hnsw.search(query, k));
            same += want.equals(got) ? 1 : 0;
            got.retainAll(want);
            overlap += got.size() / (double) want.size();
          }
        }
        figures.put("verify_queries", queries.size());
        figures.put("same_top_k_fraction", Math.round(1000.0 * same / queries.size()) / 1000.0);
        figures.put("mean_overlap_at_k", Math.round(1000.0 * overlap / queries.size()) / 1000.0);
        figures.put("k", k);
        System.err.printf(
            "HNSW vs exact on %d queries: the same top-%d for %.1f %%, mean overlap %.3f%n",
            queries.size(), k, 100.0 * same / queries.size(), overlap / queries.size());
      }
    }
    json.print(figures);
    return 0;
  }

  private static Set<String> ids(List<Hit> hits) {
    Set<String> ids = new HashSet<>();
    hits.forEach(h -> ids.add(h.targetId()));
    return ids;
  }
}
