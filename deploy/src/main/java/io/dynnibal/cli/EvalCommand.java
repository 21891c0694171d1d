package io.dynnibal.cli;

import io.dynnibal.cli.options.JsonOutput;
import io.dynnibal.data.JsonlCorpus;
import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.eval.Bm25Baseline;
import io.dynnibal.eval.RetrievalEvaluator;
import io.dynnibal.eval.RetrievalMetrics;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.snapshot.ParameterSnapshots;
import io.dynnibal.snapshot.SnapshotManifest;
import java.net.URI;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code dynnibal eval}: exact retrieval quality of a parameter snapshot over all targets. */
@Command(
    name = "eval",
    description = {
      "Evaluate a parameter snapshot by exact retrieval over every target, next to BM25.",
      "Encodes every target with its target tower, ranks all of them for each query exactly, and prints R@1/5/10/20/100",
      "and MRR@10/100 next to BM25's on the same queries (Lucene, k1 = 1.2, b = 0.75, the targets' texts). JSONL",
      "inputs (gz or plain) as in data/debian-packages."
    })
final class EvalCommand implements Callable<Integer> {
  @Mixin SnapshotAndTargets model;

  @Option(
      names = "--queries",
      required = true,
      description = "Queries JSONL: {query_id, query_text, target_id}.")
  Path queries;

  @Mixin JsonOutput json;

  @Override
  public Integer call() throws Exception {
    URI uri = model.snapshotUri();
    SnapshotManifest manifest = ParameterSnapshots.manifest(uri);
    List<TargetText> targetList = JsonlCorpus.readTargets(model.targets());
    List<LabelledQuery> queryList = JsonlCorpus.readQueries(queries);
    RetrievalMetrics metrics;
    try (DualEncoder encoder = ParameterSnapshots.readEncoder(uri)) {
      metrics = RetrievalEvaluator.evaluate(encoder, targetList, queryList);
    }
    RetrievalMetrics bm25 = Bm25Baseline.evaluate(targetList, queryList);
    System.err.print(
        MetricsTable.render(
            List.of(
                new MetricsTable.Row("model " + manifest.version(), metrics),
                new MetricsTable.Row("bm25", bm25))));
    if (metrics.unknownTargets() > 0) {
      System.err.println(
          metrics.unknownTargets()
              + " queries name a target_id missing from "
              + model.targets()
              + "; they count as misses.");
    }
    Map<String, Object> figures = new LinkedHashMap<>();
    figures.put("snapshot", uri.toString());
    figures.put("model_version", manifest.version());
    figures.put("step", manifest.step());
    figures.putAll(metrics.figures());
    bm25.figures().forEach((k, v) -> figures.put("bm25_" + k, v));
    json.print(figures);
    return 0;
  }
}
