package io.dynnibal.tests.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.negatives.UnnamedShare;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.tests.harness.StreamingClusterExtension;
import io.dynnibal.tests.harness.TrainingJobs;
import io.dynnibal.trainer.FaultInjection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.core.execution.JobClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code negatives.pool=positives} on the whole job: the shards index, and draw hard and uniform
 * negatives from, only the targets training pairs have named, while every target stays in their
 * state.
 */
class NegativesPoolTest {
  @RegisterExtension
  static final StreamingClusterExtension CLUSTER = StreamingClusterExtension.withTaskManagers(1, 2);

  private static final List<String> NAMED = List.of("item0", "item2", "item4", "item6");
  private static final List<String> NEVER_NAMED = List.of("item1", "item3", "item5", "item7");

  @Test
  @Timeout(240)
  void theShardsDrawNegativesOnlyFromTargetsThatPairsNamed(EmbeddedKafkaBroker kafka)
      throws Exception {
    SyntheticCorpus corpus = corpus();
    List<LabelledQuery> evenTargetsOnly = pairsOfEvenTargets(corpus);
    long named = evenTargetsOnly.stream().map(LabelledQuery::targetId).distinct().count();
    TrainingJobConfig config =
        positivesPool(
            kafka, "pool-test", 0, String.join(",", NAMED) + "," + String.join(",", NEVER_NAMED));

    List<TrainingMetrics> seen = new ArrayList<>();
    try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties());
        TopicReader<TrainingMetrics> metrics =
            new TopicReader<>(
                kafka.clientProperties(), config.metricsTopic(), TrainingMetrics.class)) {
      publisher.publishTargets(config.targetsTopic(), corpus.targets, null);
      JobClient job = TrainingJobs.start(config, FaultInjection.NONE, conf -> {});
      try {
        TrainingJobs.awaitTargetsIndexed(kafka.clientProperties(), config, job);
        // Until the cache has moved twice (the first cycles re-encode exactly and rebuild the
        // trees from state, the later ones map them).
        Trained trained =
            trainUntilCycles(publisher, config, metrics, seen, job, evenTargetsOnly, 2, 10);
        long published = trained.published();
        TrainingMetrics last = trained.last();
        assertTrue(last.getReencodeCycles() >= 2, "the cache never moved: " + last);

        Map<String, Long> drawn = last.getWatchedNegatives();
        long namedDrawn = NAMED.stream().mapToLong(id -> drawn.getOrDefault(id, 0L)).sum();
        assertTrue(namedDrawn > 0, "no named target was ever drawn: the check is vacuous");
        for (String id : NEVER_NAMED) {
          assertEquals(0L, drawn.getOrDefault(id, 0L), id + " was drawn but no pair named it");
        }
        assertEquals(named, last.getIndexTargets(), "the index holds the named targets only");
        assertEquals(
            (long) corpus.targets.size() * config.model().outputDim() * Float.BYTES,
            last.getFullDimensionBytes(),
            "Mem % is against every stored target, not the pool");

        // A named target deleted and published again joins the pool again without a new pair:
        // the name belongs to the pairs, not to the target's record.
        List<LabelledQuery> others =
            evenTargetsOnly.stream().filter(q -> !q.targetId().equals("item0")).toList();
        publisher.deleteTarget(config.targetsTopic(), "item0");
        // Batches report the pool's size; targets and pairs come on topics of their own, so pass
        // epochs until a batch answered after the delete reports it.
        published = trainUntil(publisher, config, metrics, seen, job, others, published, named - 1);
        publisher.publishTargets(config.targetsTopic(), corpus.targets.subList(0, 1), null);
        trainUntil(publisher, config, metrics, seen, job, others, published, named);
      } finally {
        job.cancel().get();
      }
    }
  }

  /**
   * {@code negatives.unnamed.share}: the unnamed targets join the pool a share at a time, a new
   * share with each model version. Every unnamed target is watched: none that no version admitted
   * is ever drawn, and those drawn include targets only later versions admitted (the share rotates
   * with updates by map too, not only when a tree is rebuilt).
   */
  @Test
  @Timeout(240)
  void aShareOfTheUnnamedTargetsJoinsThePoolAnewWithEachModelVersion(EmbeddedKafkaBroker kafka)
      throws Exception {
    SyntheticCorpus corpus = corpus();
    List<LabelledQuery> evenTargetsOnly = pairsOfEvenTargets(corpus);
    List<String> unnamed =
        corpus.targets.stream()
            .map(TargetText::targetId)
            .filter(id -> Integer.parseInt(id.substring(4)) % 2 == 1)
            .toList();
    TrainingJobConfig config = positivesPool(kafka, "share-test", 0.25, String.join(",", unnamed));

    List<TrainingMetrics> seen = new ArrayList<>();
    TrainingMetrics last = null;
    try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties());
        TopicReader<TrainingMetrics> metrics =
            new TopicReader<>(
                kafka.clientProperties(), config.metricsTopic(), TrainingMetrics.class)) {
      publisher.publishTargets(config.targetsTopic(), corpus.targets, null);
      JobClient job = TrainingJobs.start(config, FaultInjection.NONE, conf -> {});
      try {
        TrainingJobs.awaitTargetsIndexed(kafka.clientProperties(), config, job);
        last =
            trainUntilCycles(publisher, config, metrics, seen, job, evenTargetsOnly, 4, 12).last();
      } finally {
        job.cancel().get();
      }
    }
    assertTrue(last.getReencodeCycles() >= 4, "the cache moved too few times: " + last);

    UnnamedShare share = config.unnamedShare();
    long newest = last.getModelVersion();
    Set<String> everAdmitted = new HashSet<>();
    List<Set<String>> admittedBy = new ArrayList<>();
    for (long v = 0; v <= newest; v++) {
      long version = v;
      Set<String> admitted = new HashSet<>();
      unnamed.stream().filter(id -> share.admits(id, version)).forEach(admitted::add);
      admittedBy.add(admitted);
      everAdmitted.addAll(admitted);
    }
    Map<String, Long> drawnCounts = last.getWatchedNegatives();
    Set<String> drawn = new HashSet<>();
    unnamed.stream().filter(id -> drawnCounts.getOrDefault(id, 0L) > 0).forEach(drawn::add);
    for (String id : unnamed) {
      if (!everAdmitted.contains(id)) {
        assertEquals(0L, drawnCounts.getOrDefault(id, 0L), id + " was drawn but never admitted");
      }
    }
    assertTrue(everAdmitted.size() < unnamed.size(), "every unnamed target admitted: vacuous");
    // The first update re-encodes exactly and builds the tree anew; the later ones move it by
    // their maps, and the share must rotate then too.
    Set<String> firstTwo = new HashSet<>(admittedBy.get(0));
    firstTwo.addAll(admittedBy.get(1));
    assertFalse(
        firstTwo.containsAll(drawn),
        "every unnamed target drawn is in the shares of versions 0 and 1: the share stopped"
            + " rotating; drawn "
            + drawn);
  }

  private static SyntheticCorpus corpus() {
    return new SyntheticCorpus(120, 300, 8, 3, 13);
  }

  /** The corpus's training pairs whose target is item0, item2, ...: half the targets named. */
  private static List<LabelledQuery> pairsOfEvenTargets(SyntheticCorpus corpus) {
    return corpus.train.stream()
        .filter(q -> Integer.parseInt(q.targetId().substring(4)) % 2 == 0)
        .toList();
  }

  /** A small job under {@code negatives.pool=positives}, its topics created. */
  private static TrainingJobConfig positivesPool(
      EmbeddedKafkaBroker kafka, String name, double unnamedShare, String watched) {
    TrainingJobConfig config = TrainingJobs.smallConfig(kafka, CLUSTER.workDir(), name);
    config.training.batchSize = 16;
    config.negatives.negativesPerExample = 2;
    config.reencode.reencodeEvery = 4;
    config.index.landmarks = 16;
    config.reencode.regressionSamples = 64;
    config.job.seed = 5;
    config.negatives.negativesPool = "positives";
    config.negatives.negativesUnnamedShare = unnamedShare;
    config.job.watchTargets = watched;
    config.validate();
    kafka.createTopics(JobTopics.all(config, 2, (short) 1));
    return config;
  }

  private record Trained(long published, TrainingMetrics last) {}

  /**
   * Publishes {@code pairs} an epoch at a time (at most {@code maxEpochs}) until every shard has
   * applied {@code cycles} model updates, or the epochs run out.
   */
  private static Trained trainUntilCycles(
      CorpusPublisher publisher,
      TrainingJobConfig config,
      TopicReader<TrainingMetrics> metrics,
      List<TrainingMetrics> seen,
      JobClient job,
      List<LabelledQuery> pairs,
      int cycles,
      int maxEpochs)
      throws Exception {
    long published = 0;
    TrainingMetrics last = null;
    for (int epoch = 0;
        epoch < maxEpochs && (last == null || last.getReencodeCycles() < cycles);
        epoch++) {
      publisher.publishPairs(config.pairsTopic(), pairs, "e" + epoch, 0, null);
      published += pairs.size();
      long steps = published / config.training.batchSize;
      last =
          TrainingJobs.await(metrics, seen, job, Duration.ofSeconds(90), m -> m.getStep() >= steps);
    }
    return new Trained(published, last);
  }

  /**
   * Publishes {@code pairs} an epoch at a time (at most 3) until the pool reports {@code poolSize};
   * returns the pairs published in all.
   */
  private static long trainUntil(
      CorpusPublisher publisher,
      TrainingJobConfig config,
      TopicReader<TrainingMetrics> metrics,
      List<TrainingMetrics> seen,
      JobClient job,
      List<LabelledQuery> pairs,
      long published,
      long poolSize)
      throws Exception {
    for (int epoch = 0; epoch < 3; epoch++) {
      publisher.publishPairs(config.pairsTopic(), pairs, "p" + published, 0, null);
      published += pairs.size();
      long steps = published / config.training.batchSize;
      TrainingMetrics last =
          TrainingJobs.await(metrics, seen, job, Duration.ofSeconds(90), m -> m.getStep() >= steps);
      if (last.getIndexTargets() == poolSize) {
        return published;
      }
    }
    throw new AssertionError(
        "the pool never reported " + poolSize + " targets: " + seen.get(seen.size() - 1));
  }
}
