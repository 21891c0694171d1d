package io.dynnibal.local;

import io.dynnibal.data.JsonlCorpus;
import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Targets, training pairs and evaluation queries: from files, or the Debian packages corpus bundled
 * in the CLI (its README beside the files describes it).
 */
public record Corpus(
    String name, List<TargetText> targets, List<LabelledQuery> train, List<LabelledQuery> eval) {
  private static final String BUNDLED = "/io/dynnibal/corpus/debian-packages/";

  public static Corpus bundledDebian() {
    return new Corpus(
        "debian-packages (bundled)",
        JsonlCorpus.readTargets(resource("targets.jsonl.gz"), "targets"),
        JsonlCorpus.readQueries(resource("queries.train.jsonl.gz"), "queries.train"),
        JsonlCorpus.readQueries(resource("queries.dev.jsonl.gz"), "queries.dev"));
  }

  public static Corpus files(Path targets, Path train, Path eval) {
    return new Corpus(
        targets.getFileName().toString(),
        JsonlCorpus.readTargets(targets),
        JsonlCorpus.readQueries(train),
        JsonlCorpus.readQueries(eval));
  }

  /**
   * At most {@code limit} of the evaluation queries (0: all), a seeded random subset: the same for
   * every model.
   */
  public List<LabelledQuery> evalSubset(int limit, long seed) {
    if (limit <= 0 || eval.size() <= limit) {
      return eval;
    }
    List<LabelledQuery> shuffled = new java.util.ArrayList<>(eval);
    java.util.Collections.shuffle(shuffled, new java.util.Random(seed));
    return List.copyOf(shuffled.subList(0, limit));
  }

  /**
   * A smaller corpus of at most {@code maxTargets} targets (0: all) and {@code evalLimit}
   * evaluation queries (0: all): the targets of those queries first, then those that training pairs
   * name, then others ({@link io.dynnibal.training.local.LocalTraining#subset}); only the pairs and
   * queries whose target is kept. The same seed gives the same subset.
   */
  public Corpus subset(int maxTargets, int evalLimit, long seed) {
    List<LabelledQuery> queries = evalSubset(evalLimit, seed);
    if (maxTargets <= 0 || maxTargets >= targets.size()) {
      return new Corpus(name, targets, train, queries);
    }
    List<TargetText> kept =
        io.dynnibal.training.local.LocalTraining.subset(targets, queries, train, maxTargets, seed);
    java.util.Set<String> ids = new java.util.HashSet<>();
    kept.forEach(t -> ids.add(t.targetId()));
    return new Corpus(
        String.format("%s, a subset of its %,d targets", name, targets.size()),
        kept,
        train.stream().filter(q -> ids.contains(q.targetId())).toList(),
        queries.stream().filter(q -> ids.contains(q.targetId())).toList());
  }

  private static InputStream resource(String file) {
    InputStream in = Corpus.class.getResourceAsStream(BUNDLED + file);
    if (in == null) {
      throw new UncheckedIOException(
          new IOException("the bundled corpus file " + file + " is missing from the CLI"));
    }
    return in;
  }
}
