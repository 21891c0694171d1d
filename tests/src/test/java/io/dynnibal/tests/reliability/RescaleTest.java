package io.dynnibal.tests.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.dynnibal.jobs.embedded.EmbeddedKafkaBroker;
import io.dynnibal.jobs.kafka.CorpusPublisher;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.jobs.training.TrainingJob;
import io.dynnibal.jobs.training.TrainingJobConfig;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.tests.harness.StreamingClusterExtension;
import io.dynnibal.tests.training.SyntheticCorpus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Stop with a savepoint at parallelism 2, resume at 3: the four shards' key groups are redistributed over three
 * subtasks, each rebuilds its trees from RocksDB state, and the index is complete; training continues with every
 * step committed exactly once across the rescale.
 */
class RescaleTest {
  @RegisterExtension
  static final StreamingClusterExtension CLUSTER = StreamingClusterExtension.withTaskManagers(1, 3);

  @Test
  @Timeout(240)
  void aSavepointAtParallelismTwoResumesAtThreeWithTheWholeIndex(EmbeddedKafkaBroker kafka) throws Exception {
    SyntheticCorpus corpus = new SyntheticCorpus(120, 240, 8, 2, 19);
    TrainingJobConfig config = config(kafka);
    kafka.createTopics(TrainingJob.topics(config, 2, (short) 1));
    List<TrainingMetrics> seen = new ArrayList<>();
    try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties());
        TopicReader<TrainingMetrics> metrics =
            new TopicReader<>(kafka.clientProperties(), config.metricsTopic(), TrainingMetrics.class)) {
      publisher.publishTargets(config.targetsTopic(), corpus.targets, null);
      JobClient job = start(config, 2, null);
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (!TopicReader.groupCaughtUp(kafka.clientProperties(), config.groupId, config.targetsTopic())) {
        check(job, deadline);
        Thread.sleep(200);
      }
      publisher.publishPairs(config.pairsTopic(), corpus.train, "e0", 0, null);
      long published = corpus.train.size();
      await(metrics, seen, job, published / config.batchSize);
      Path savepoints = Files.createDirectories(CLUSTER.workDir().resolve("savepoints"));
      String savepoint = job.stopWithSavepoint(false, savepoints.toUri().toString(), SavepointFormatType.CANONICAL)
          .get();

      JobClient rescaled = start(config, 3, savepoint);
      try {
        publisher.publishPairs(config.pairsTopic(), corpus.train, "e1", 0, null);
        published += corpus.train.size();
        long steps = published / config.batchSize;
        TrainingMetrics last = await(metrics, seen, rescaled, steps);
        seen.addAll(metrics.poll(Duration.ofSeconds(1)));
        assertEquals(corpus.targets.size(), last.getIndexTargets(), "index after the rescale");
        assertEquals(LongStream.rangeClosed(1, steps).boxed().toList(),
            seen.stream().map(TrainingMetrics::getStep).toList(), "committed steps across the rescale");
        assertEquals(steps * config.batchSize, last.getPairsTrained());
      } finally {
        rescaled.cancel().get();
      }
    }
  }

  private static TrainingMetrics await(
      TopicReader<TrainingMetrics> metrics, List<TrainingMetrics> seen, JobClient job, long step) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    while (seen.isEmpty() || seen.get(seen.size() - 1).getStep() < step) {
      check(job, deadline);
      seen.addAll(metrics.poll(Duration.ofMillis(200)));
    }
    return seen.get(seen.size() - 1);
  }

  private static JobClient start(TrainingJobConfig config, int parallelism, String savepoint) throws Exception {
    config.parallelism = parallelism;
    Configuration conf = TrainingJob.flinkConfiguration(config);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    if (savepoint != null) {
      conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(parallelism);
    TrainingJob.build(env, config);
    return env.executeAsync("rescale at parallelism " + parallelism);
  }

  private static TrainingJobConfig config(EmbeddedKafkaBroker kafka) {
    TrainingJobConfig c = new TrainingJobConfig();
    c.bootstrapServers = kafka.bootstrapServers();
    c.topicPrefix = "rescale.";
    c.groupId = "rescale";
    c.parallelism = 2;
    c.shards = 4;
    c.checkpointDir = CLUSTER.workDir().resolve("checkpoints").toUri().toString();
    c.checkpointInterval = Duration.ofMillis(500);
    c.snapshotDir = CLUSTER.workDir().resolve("snapshots").toString();
    c.batchSize = 16;
    c.sampledNegatives = 8;
    c.uniformNegatives = 8;
    c.reencodeEvery = 5;
    c.landmarks = 8;
    c.regressionSamples = 32;
    c.buckets = 4096;
    c.embeddingDim = 32;
    c.hiddenDim = 64;
    c.outputDim = 32;
    c.warmupSteps = 5;
    return c.validate();
  }

  private static void check(JobClient job, long deadline) throws Exception {
    if (job.getJobStatus().get().isGloballyTerminalState()) {
      job.getJobExecutionResult().get();
      fail("the job ended");
    }
    if (System.nanoTime() > deadline) {
      fail("timed out");
    }
  }
}
