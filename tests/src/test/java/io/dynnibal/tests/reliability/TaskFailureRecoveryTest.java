package io.dynnibal.tests.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.tests.harness.StreamingClusterExtension;
import io.dynnibal.tests.harness.TrainingJobs;
import io.dynnibal.tests.training.SyntheticCorpus;
import io.dynnibal.trainer.FaultInjection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.LongStream;
import org.apache.flink.core.execution.JobClient;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The trainer's task fails three times in one run (an exception before steps 12, 30 and 47); each
 * time Flink restores every operator from the last checkpoint - RocksDB index, trainer parameters
 * and Adam state, source offsets - and replays. Compared with what a run without failures must
 * produce: the committed metrics carry each step 1..n exactly once, every published pair is trained
 * (n = pairs / B), and the index holds every target.
 */
class TaskFailureRecoveryTest {
  @RegisterExtension
  static final StreamingClusterExtension CLUSTER = StreamingClusterExtension.withTaskManagers(1, 2);

  /** Steps that fail once each; the set lives in this JVM, which the MiniCluster shares. */
  private static final Set<Long> FAILED = ConcurrentHashMap.newKeySet();

  /**
   * @param exactPerBatch {@code reencode.exact.per.batch}: 0 re-encodes the landmarks' cycle at
   *     once; 8 applies its map and re-encodes 8 targets per batch, so restores and later maps land
   *     while targets are still due
   */
  @ParameterizedTest
  @ValueSource(ints = {0, 8})
  @Timeout(240)
  void repeatedTaskFailuresLoseNothingAndRepeatNothing(int exactPerBatch, EmbeddedKafkaBroker kafka)
      throws Exception {
    FAILED.clear();
    SyntheticCorpus corpus = new SyntheticCorpus(100, 200, 8, 3, 17);
    TrainingJobConfig config =
        TrainingJobs.smallConfig(kafka, CLUSTER.workDir(), "faults-" + exactPerBatch);
    config.job.checkpointInterval = Duration.ofMillis(300);
    config.reencode.reencodeExactPerBatch = exactPerBatch;
    config.validate();
    kafka.createTopics(JobTopics.all(config, 2, (short) 1));
    FaultInjection faults =
        step -> {
          if ((step == 12 || step == 30 || step == 47) && FAILED.add(step)) {
            throw new IllegalStateException("injected failure before step " + step);
          }
        };

    try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties());
        TopicReader<TrainingMetrics> metrics =
            new TopicReader<>(
                kafka.clientProperties(), config.metricsTopic(), TrainingMetrics.class)) {
      publisher.publishTargets(config.targetsTopic(), corpus.targets, null);
      JobClient job =
          TrainingJobs.start(config, faults, TrainingJobs.restarting(5, Duration.ofMillis(200)));
      try {
        TrainingJobs.awaitTargetsIndexed(kafka.clientProperties(), config, job);
        // Two passes, published in steps so that checkpoints complete between the failures.
        long published = 0;
        List<TrainingMetrics> seen = new ArrayList<>();
        for (int pass = 0; pass < 2; pass++) {
          publisher.publishPairs(config.pairsTopic(), corpus.train, "e" + pass, 0, null);
          published += corpus.train.size();
          TrainingJobs.awaitStep(metrics, seen, job, published / config.training.batchSize);
        }
        seen.addAll(metrics.poll(Duration.ofSeconds(1)));
        assertEquals(Set.of(12L, 30L, 47L), FAILED, "the injected failures did not all happen");
        long steps = published / config.training.batchSize;
        assertEquals(
            LongStream.rangeClosed(1, steps).boxed().toList(),
            seen.stream().map(TrainingMetrics::getStep).toList(),
            "committed steps must be 1..n, each once");
        TrainingMetrics last = seen.get(seen.size() - 1);
        assertEquals(steps * config.training.batchSize, last.getPairsTrained(), "pairs trained");
        assertEquals(0, last.getPairsDeadLettered());
        assertEquals(
            corpus.targets.size(), last.getIndexTargets(), "index size after three restores");
        // Audit by pair id: every published pair appears in exactly one committed step.
        assertEquals(
            TrainingJobs.publishedPairIds(corpus.train, "e0", "e1"),
            TrainingJobs.trainedPairIds(seen),
            "pairs lost or trained twice");
        assertTrue(last.getModelVersion() >= 2, "re-encoding stopped after the failures: " + last);
      } finally {
        job.cancel().get();
      }
    }
  }
}
