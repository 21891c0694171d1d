package io.dynnibal.bench.soak;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.local.Corpus;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.schemas.DeadLetter;
import io.dynnibal.schemas.TrainingMetrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The soak's pairs: what it published to the pairs topic, pair id by pair id, and the audit of
 * those ids against the steps the job committed. A pair id is its query id and the pass it was
 * published in, so a pair published again in a later pass is a new id; each must appear in exactly
 * one committed step.
 */
final class PairLedger {
  private final Properties kafka;
  private final String pairsTopic;
  private final Corpus corpus;
  private final Set<String> publishedIds = new HashSet<>();
  private int chunk;
  private int cursor;
  private long badPublished;
  private long slotTakers;

  PairLedger(Properties kafka, String pairsTopic, Corpus corpus) {
    this.kafka = kafka;
    this.pairsTopic = pairsTopic;
    this.corpus = corpus;
  }

  /** Training pairs published so far (each pair id once). */
  long published() {
    return publishedIds.size();
  }

  /** Bad pairs that passed decoding and took a place in a batch before they were dead-lettered. */
  long slotTakers() {
    return slotTakers;
  }

  /** {@code size} more training pairs, in corpus order, each pair id new. */
  void publish(int size) {
    List<LabelledQuery> train = corpus.train();
    List<LabelledQuery> pairs = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      pairs.add(train.get(cursor++ % train.size()));
    }
    String pass = "soak" + chunk++;
    try (CorpusPublisher publisher = new CorpusPublisher(kafka)) {
      publisher.publishPairs(pairsTopic, pairs, pass, 0, null);
    }
    pairs.forEach(q -> publishedIds.add(q.queryId() + "#" + pass));
  }

  /**
   * Garbage bytes, pairs naming unknown targets and empty queries, tagged {@code tag}: dead
   * letters, no failure. Returns how many records were published.
   */
  int publishBadRecords(String tag) {
    try (CorpusPublisher publisher = new CorpusPublisher(kafka)) {
      int n = 0;
      for (int i = 0; i < 5; i++, n++) {
        publisher.publishRaw(
            pairsTopic, "garbage-" + tag + "-" + i, new byte[] {1, 2, 3, (byte) i});
      }
      List<LabelledQuery> bad = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        bad.add(
            new LabelledQuery("soak-unknown-" + i, "a query for no target", "no-such-target-" + i));
        bad.add(new LabelledQuery("soak-empty-" + i, "  ", corpus.targets().get(i).targetId()));
      }
      publisher.publishPairs(pairsTopic, bad, tag, 0, null);
      n += bad.size();
      slotTakers += 5; // the unknown targets: empty queries are refused when decoded
      badPublished += n;
      return n;
    }
  }

  /**
   * Reads back every committed step and dead letter and checks each published pair id against them;
   * {@code log} hears about lost and unexpected pairs.
   */
  SoakReport audit(
      TrainingJobConfig config,
      List<InjectedFault> injected,
      long restores,
      double seconds,
      Consumer<String> log) {
    long trained = 0;
    Set<String> distinct = new HashSet<>();
    List<TrainingMetrics> committed;
    try (TopicReader<TrainingMetrics> reader =
        new TopicReader<>(kafka, config.metricsTopic(), TrainingMetrics.class)) {
      committed = reader.readUntilQuiet(Duration.ofSeconds(5));
    }
    for (TrainingMetrics m : committed) {
      for (CharSequence id : m.getPairIds()) {
        trained++;
        distinct.add(id.toString());
      }
    }
    List<String> missing =
        publishedIds.stream().filter(id -> !distinct.contains(id)).sorted().toList();
    long lost = missing.size();
    if (lost > 0) {
      log.accept(
          "lost: " + missing.subList(0, Math.min(10, missing.size())) + (lost > 10 ? " ..." : ""));
    }
    long unexpected = distinct.stream().filter(id -> !publishedIds.contains(id)).count();
    if (unexpected > 0) {
      log.accept(
          unexpected
              + " trained pair ids were never published as training pairs (bad records trained?)");
    }
    long deadLetters;
    try (TopicReader<DeadLetter> reader =
        new TopicReader<>(kafka, config.deadLettersTopic(), DeadLetter.class)) {
      deadLetters = reader.readUntilQuiet(Duration.ofSeconds(3)).size();
    }
    TrainingMetrics end = committed.isEmpty() ? null : committed.get(committed.size() - 1);
    double maxRecovery =
        injected.stream()
            .filter(f -> f.recoverySeconds() != null)
            .mapToDouble(InjectedFault::recoverySeconds)
            .max()
            .orElse(0);
    return new SoakReport(
        published(),
        distinct.size() - unexpected,
        deadLetters,
        badPublished,
        lost,
        trained - distinct.size(),
        unexpected,
        injected.size(),
        restores,
        maxRecovery,
        end == null ? 0 : end.getStep(),
        seconds,
        List.copyOf(injected));
  }
}
