package io.dynnibal.tests.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.schemas.ModelUpdate;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.tests.harness.StreamingClusterExtension;
import io.dynnibal.tests.harness.TrainingJobs;
import io.dynnibal.tests.training.SyntheticCorpus;
import io.dynnibal.trainer.FaultInjection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.apache.flink.core.execution.JobClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Model updates leave the trainer without waiting for a checkpoint, so a failure can leave updates
 * of a branch the restore discards on the topic, where the restored shards read them again. Here
 * the trainer fails right after model update 3 reached Kafka (the fault waits for it on the topic
 * while the trainer's task is blocked, so no checkpoint can include it), and the restored trainer
 * fails again before its first step. After the restores: no version number names two models, the
 * first update skips the lost number and maps from the restored version (a shard that took the lost
 * one re-encodes exactly), every shard ends on the surviving branch, and the pairs are still
 * trained exactly once.
 */
class LostBranchModelUpdatesTest {
  @RegisterExtension
  static final StreamingClusterExtension CLUSTER = StreamingClusterExtension.withTaskManagers(1, 2);

  private static final long LOST_VERSION = 3;

  /**
   * The version after which the trainer failed; lives in this JVM, which the MiniCluster shares.
   */
  private static final AtomicLong FAILED_AFTER = new AtomicLong();

  /** The step before which the restored trainer failed again (0: not yet). */
  private static final AtomicLong FAILED_AGAIN_BEFORE = new AtomicLong();

  @Test
  @Timeout(240)
  void aLostBranchsUpdatesAreSupersededAndNoVersionNamesTwoModels(EmbeddedKafkaBroker kafka)
      throws Exception {
    SyntheticCorpus corpus = new SyntheticCorpus(100, 200, 8, 3, 17);
    TrainingJobConfig config = TrainingJobs.smallConfig(kafka, CLUSTER.workDir(), "lost-branch");
    config.validate();
    kafka.createTopics(JobTopics.all(config, 2, (short) 1));
    FaultInjection faults =
        new FailAfterUpdateOnTopic(kafka.clientProperties(), config.modelUpdatesTopic());

    try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties());
        TopicReader<TrainingMetrics> metrics =
            new TopicReader<>(
                kafka.clientProperties(), config.metricsTopic(), TrainingMetrics.class)) {
      publisher.publishTargets(config.targetsTopic(), corpus.targets, null);
      JobClient job =
          TrainingJobs.start(config, faults, TrainingJobs.restarting(3, Duration.ofMillis(200)));
      try {
        TrainingJobs.awaitTargetsIndexed(kafka.clientProperties(), config, job);
        // Passes until every shard answers with a version above the lost one (the failure comes
        // in the second; the exact re-encode after it takes a few dozen steps to land).
        long published = 0;
        List<String> passes = new ArrayList<>();
        List<TrainingMetrics> seen = new ArrayList<>();
        while (passes.size() < 2 || seen.get(seen.size() - 1).getReencodeCycles() <= LOST_VERSION) {
          assertTrue(
              passes.size() < 6, "the shards never moved past the lost branch: " + trace(seen));
          passes.add("e" + passes.size());
          publisher.publishPairs(
              config.pairsTopic(), corpus.train, passes.get(passes.size() - 1), 0, null);
          published += corpus.train.size();
          TrainingJobs.awaitStep(metrics, seen, job, published / config.training.batchSize);
        }
        seen.addAll(metrics.poll(Duration.ofSeconds(1)));
        assertEquals(LOST_VERSION, FAILED_AFTER.get(), "the injected failure did not happen");
        assertTrue(FAILED_AGAIN_BEFORE.get() > 0, "the second failure did not happen");

        Map<Long, List<ModelUpdate>> byVersion =
            allUpdates(kafka.clientProperties(), config.modelUpdatesTopic()).stream()
                .collect(
                    Collectors.groupingBy(
                        ModelUpdate::getVersion, TreeMap::new, Collectors.toList()));
        for (var e : byVersion.entrySet()) {
          // An at-least-once sink may deliver an update twice; twice the same model is harmless.
          Set<String> models =
              e.getValue().stream()
                  .map(u -> u.getSnapshotUri() + " @ step " + u.getStep())
                  .collect(Collectors.toSet());
          assertEquals(1, models.size(), "version " + e.getKey() + " names two models: " + models);
        }
        assertTrue(byVersion.containsKey(LOST_VERSION), "the lost update is on the topic");
        assertTrue(
            byVersion.containsKey(LOST_VERSION + 1),
            "no update after the restore: " + byVersion.keySet());
        ModelUpdate restart = byVersion.get(LOST_VERSION + 1).get(0);
        assertTrue(
            restart.getMapFrom() != null && restart.getMapFrom() < LOST_VERSION,
            "the update after the restore maps from the restored version, not the lost one: "
                + restart.getMapFrom());

        long steps = published / config.training.batchSize;
        assertEquals(
            LongStream.rangeClosed(1, steps).boxed().toList(),
            seen.stream().map(TrainingMetrics::getStep).toList(),
            "committed steps must be 1..n, each once");
        assertEquals(
            TrainingJobs.publishedPairIds(corpus.train, passes.toArray(new String[0])),
            TrainingJobs.trainedPairIds(seen),
            "pairs lost or trained twice");
        assertNotNull(
            seen.get(seen.size() - 1).getFeedbackLatencyMs(), "feedback latency measured");
      } finally {
        job.cancel().get();
      }
    }
  }

  /** Per step: the trainer's version / the version every shard answered with. */
  private static List<String> trace(List<TrainingMetrics> seen) {
    return seen.stream()
        .map(m -> m.getStep() + ":" + m.getModelVersion() + "/" + m.getReencodeCycles())
        .toList();
  }

  /** Every record on the model-updates topic, from its beginning. */
  private static List<ModelUpdate> allUpdates(Properties client, String topic) {
    try (TopicReader<ModelUpdate> reader =
        TopicReader.fromLast(client, topic, ModelUpdate.class, Integer.MAX_VALUE)) {
      return reader.readUntilQuiet(Duration.ofSeconds(2));
    }
  }

  /**
   * Fails the trainer once, right after {@link #LOST_VERSION} left it, as soon as that update is on
   * the topic (the trainer's task waits, so no checkpoint can hold the version).
   */
  private static final class FailAfterUpdateOnTopic implements FaultInjection {
    private static final long serialVersionUID = 1L;
    private final Properties client;
    private final String topic;

    FailAfterUpdateOnTopic(Properties client, String topic) {
      this.client = client;
      this.topic = topic;
    }

    /**
     * The restored trainer fails again before its first step, most likely before the update that
     * replaces the lost one exists: a second restore from the same checkpoint must skip version 3
     * too.
     */
    @Override
    public void beforeStep(long step) {
      if (FAILED_AFTER.get() != 0 && FAILED_AGAIN_BEFORE.compareAndSet(0, step)) {
        throw new IllegalStateException("injected second failure before step " + step);
      }
    }

    @Override
    public void afterModelUpdate(long version) {
      if (version != LOST_VERSION || !FAILED_AFTER.compareAndSet(0, version)) {
        return;
      }
      try (TopicReader<ModelUpdate> reader =
          TopicReader.fromLast(client, topic, ModelUpdate.class, Integer.MAX_VALUE)) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (reader.poll(Duration.ofMillis(200)).stream()
            .noneMatch(u -> u.getVersion() == version)) {
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException("model update " + version + " never reached " + topic);
          }
        }
      }
      throw new IllegalStateException(
          "injected failure after model update " + version + " reached the topic");
    }
  }
}
