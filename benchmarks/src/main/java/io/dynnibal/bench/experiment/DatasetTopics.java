package io.dynnibal.bench.experiment;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.local.Corpus;
import io.dynnibal.local.CorpusPublisher;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * The experiment's dataset on Kafka: two single-partition topics (targets, compacted; training
 * pairs, {@code epochs} shuffled passes, kept without a time limit) named by a fingerprint of what
 * they hold, published once and replayed by every run, and by a later experiment against the same
 * cluster.
 */
final class DatasetTopics {
  private DatasetTopics() {}

  /**
   * Publishes targets and {@code epochs} shuffled passes of the pairs unless the topics hold them
   * already (a rerun against the same cluster replays what is there).
   */
  static void publishOnce(
      Properties kafka,
      Corpus corpus,
      String targetsTopic,
      String pairsTopic,
      int epochs,
      long seed,
      PrintStream out)
      throws Exception {
    long wantedPairs = (long) corpus.train().size() * epochs;
    long haveTargets = total(TopicReader.endOffsets(kafka, targetsTopic));
    long havePairs = total(TopicReader.endOffsets(kafka, pairsTopic));
    if (haveTargets == corpus.targets().size() && havePairs == wantedPairs) {
      out.printf("replaying %s and %s (published before)%n", targetsTopic, pairsTopic);
      return;
    }
    if (haveTargets != 0 || havePairs != 0) {
      throw new IllegalStateException(
          "topics "
              + targetsTopic
              + " / "
              + pairsTopic
              + " hold "
              + haveTargets
              + " / "
              + havePairs
              + " records, not the "
              + corpus.targets().size()
              + " / "
              + wantedPairs
              + " of this dataset;"
              + " delete them or use another topic.prefix");
    }
    try (Admin admin = Admin.create(kafka)) {
      short replication = replication(admin);
      admin
          .createTopics(
              List.of(
                  new NewTopic(targetsTopic, 1, replication)
                      .configs(Map.of("cleanup.policy", "compact")),
                  // Replayed by every run, a later experiment's too: never removed by retention.
                  new NewTopic(pairsTopic, 1, replication).configs(Map.of("retention.ms", "-1"))))
          .all()
          .get();
    }
    try (CorpusPublisher publisher = new CorpusPublisher(kafka)) {
      out.printf(
          "publishing %,d targets to %s and %,d pairs (%d shuffled passes) to %s%n",
          corpus.targets().size(), targetsTopic, wantedPairs, epochs, pairsTopic);
      publisher.publishTargets(targetsTopic, corpus.targets(), null);
      Random random = new Random(seed);
      for (int e = 0; e < epochs; e++) {
        List<LabelledQuery> shuffled = new ArrayList<>(corpus.train());
        Collections.shuffle(shuffled, random);
        publisher.publishPairs(pairsTopic, shuffled, "e" + e, System.currentTimeMillis(), null);
      }
    }
  }

  static short replication(Admin admin) throws Exception {
    return (short) Math.min(3, admin.describeCluster().nodes().get().size());
  }

  private static long total(Map<Integer, Long> offsets) {
    return offsets.values().stream().mapToLong(Long::longValue).sum();
  }

  /** Names the published data by what it holds, so a rerun against the same cluster finds it. */
  static String fingerprint(Corpus corpus, int epochs, long seed) {
    long h = 1125899906842597L;
    for (TargetText t : corpus.targets()) {
      h = 31 * h + t.targetId().hashCode();
      h = 31 * h + t.text().hashCode();
    }
    for (LabelledQuery q : corpus.train()) {
      h = 31 * h + q.text().hashCode();
      h = 31 * h + q.targetId().hashCode();
    }
    h = 31 * (31 * h + epochs) + seed;
    // A finaliser (SplitMix64's) so that the passes and the seed, which only move the low bits of
    // h, change the ten hex digits kept: without it a 300-step and a 1000-step experiment on one
    // broker got the same topic names and the second refused to run.
    h = (h ^ (h >>> 30)) * 0xBF58476D1CE4E5B9L;
    h = (h ^ (h >>> 27)) * 0x94D049BB133111EBL;
    h ^= h >>> 31;
    return String.format("%016x", h).substring(0, 10);
  }
}
