package io.dynnibal.tests.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Stop with a savepoint at parallelism 2, resume at 3: the four shards' key groups are
 * redistributed over three subtasks, each rebuilds its trees from RocksDB state, and the index is
 * complete; training continues with every step committed exactly once across the rescale.
 */
class RescaleTest {
  @RegisterExtension
  static final StreamingClusterExtension CLUSTER = StreamingClusterExtension.withTaskManagers(1, 3);

  @Test
  @Timeout(240)
  void aSavepointAtParallelismTwoResumesAtThreeWithTheWholeIndex(EmbeddedKafkaBroker kafka)
      throws Exception {
    SyntheticCorpus corpus = new SyntheticCorpus(120, 240, 8, 2, 19);
    TrainingJobConfig config = TrainingJobs.smallConfig(kafka, CLUSTER.workDir(), "rescale");
    config.job.parallelism = 2;
    config.job.shards = 4;
    config.training.batchSize = 16;
    config.reencode.reencodeEvery = 5;
    config.validate();
    kafka.createTopics(JobTopics.all(config, 2, (short) 1));
    List<TrainingMetrics> seen = new ArrayList<>();
    try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties());
        TopicReader<TrainingMetrics> metrics =
            new TopicReader<>(
                kafka.clientProperties(), config.metricsTopic(), TrainingMetrics.class)) {
      publisher.publishTargets(config.targetsTopic(), corpus.targets, null);
      JobClient job = start(config, 2, null);
      TrainingJobs.awaitTargetsIndexed(kafka.clientProperties(), config, job);
      publisher.publishPairs(config.pairsTopic(), corpus.train, "e0", 0, null);
      long published = corpus.train.size();
      TrainingJobs.awaitStep(metrics, seen, job, published / config.training.batchSize);
      Path savepoints = Files.createDirectories(CLUSTER.workDir().resolve("savepoints"));
      String savepoint =
          job.stopWithSavepoint(false, savepoints.toUri().toString(), SavepointFormatType.CANONICAL)
              .get();

      JobClient rescaled = start(config, 3, savepoint);
      try {
        publisher.publishPairs(config.pairsTopic(), corpus.train, "e1", 0, null);
        published += corpus.train.size();
        long steps = published / config.training.batchSize;
        TrainingMetrics last = TrainingJobs.awaitStep(metrics, seen, rescaled, steps);
        seen.addAll(metrics.poll(Duration.ofSeconds(1)));
        assertEquals(corpus.targets.size(), last.getIndexTargets(), "index after the rescale");
        assertEquals(
            LongStream.rangeClosed(1, steps).boxed().toList(),
            seen.stream().map(TrainingMetrics::getStep).toList(),
            "committed steps across the rescale");
        assertEquals(steps * config.training.batchSize, last.getPairsTrained());
      } finally {
        rescaled.cancel().get();
      }
    }
  }

  private static JobClient start(TrainingJobConfig config, int parallelism, String savepoint)
      throws Exception {
    config.job.parallelism = parallelism;
    return TrainingJobs.start(
        config,
        FaultInjection.NONE,
        conf -> {
          if (savepoint != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
          }
        });
  }
}
