package io.dynnibal.tests.reliability;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.kafka.DataLossException;
import io.dynnibal.jobs.kafka.TopicFacts;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.util.ExceptionUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A job trains, stops with a savepoint, and its topics change under it before it is restored: the
 * records after its offsets are deleted (retention, here {@code deleteRecords}), the pairs topic is
 * deleted and created again, or the savepoint grows older than the targets topic keeps deletes.
 * Each restore fails at once, restarts configured, with a {@link DataLossException} that names the
 * topic (with accept.data.loss=true each goes on, skipping the records or the deletes).
 */
class LostOffsetsTest {
  @RegisterExtension
  static final StreamingClusterExtension CLUSTER = StreamingClusterExtension.withTaskManagers(1, 2);

  /** The restored job gets this long to fail; restarts (100, a second apart) would take longer. */
  private static final Duration FAILS_WITHIN = Duration.ofSeconds(60);

  @Test
  @Timeout(180)
  void aRestoreWhoseNextPairsWereDeletedFails(EmbeddedKafkaBroker kafka) throws Exception {
    TrainingJobConfig config = config(kafka, "lost-range");
    String savepoint = trainAndStop(kafka, config);
    try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties());
        Admin admin = Admin.create(kafka.clientProperties())) {
      // Pairs the stopped job has not read, then gone as retention would remove them.
      publisher.publishPairs(config.pairsTopic(), corpus().train, "e1", 0, null);
      Map<TopicPartition, RecordsToDelete> all = new HashMap<>();
      TopicReader.endOffsets(kafka.clientProperties(), config.pairsTopic())
          .forEach(
              (p, end) ->
                  all.put(
                      new TopicPartition(config.pairsTopic(), p),
                      RecordsToDelete.beforeOffset(end)));
      admin.deleteRecords(all).all().get();
    }
    String message = failureOf(restore(config, savepoint));
    assertTrue(
        message.contains("no longer in their partition's log")
            && message.contains(config.pairsTopic() + "-")
            && message.contains("accept.data.loss=true"),
        message);
  }

  @Test
  @Timeout(180)
  void aRestoreIntoARecreatedTopicFails(EmbeddedKafkaBroker kafka) throws Exception {
    TrainingJobConfig config = config(kafka, "recreated");
    String savepoint = trainAndStop(kafka, config);
    String before;
    String after;
    try (Admin admin = Admin.create(kafka.clientProperties())) {
      before = topicId(kafka.clientProperties(), config.pairsTopic());
      admin.deleteTopics(List.of(config.pairsTopic())).all().get();
      recreate(kafka, config, admin);
      after = topicId(kafka.clientProperties(), config.pairsTopic());
    }
    try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties())) {
      // More pairs than before: the restored offsets lie inside the new topic's log.
      for (String pass : List.of("n0", "n1")) {
        publisher.publishPairs(config.pairsTopic(), corpus().train, pass, 0, null);
      }
    }
    String message = failureOf(restore(config, savepoint));
    assertTrue(
        message.contains("topic " + config.pairsTopic() + " was deleted and created again")
            && message.contains(before)
            && message.contains(after),
        message);
  }

  @Test
  @Timeout(180)
  void aRestoreOlderThanTheTargetsKeepDeletesFails(EmbeddedKafkaBroker kafka) throws Exception {
    TrainingJobConfig config = config(kafka, "old-deletes");
    config.kafka.topicTargetsDeleteRetention = Duration.ofSeconds(2);
    String savepoint = trainAndStop(kafka, config);
    // The condition is time itself: the savepoint must be older than delete.retention.ms.
    Thread.sleep(config.kafka.topicTargetsDeleteRetention.plusSeconds(1).toMillis());
    String message = failureOf(restore(config, savepoint));
    assertTrue(
        message.contains("longer than the compacted topic " + config.targetsTopic())
            && message.contains("delete.retention.ms 2000"),
        message);
  }

  private static SyntheticCorpus corpus() {
    return new SyntheticCorpus(40, 120, 8, 2, 29);
  }

  private static TrainingJobConfig config(EmbeddedKafkaBroker kafka, String name) {
    TrainingJobConfig config = TrainingJobs.smallConfig(kafka, CLUSTER.workDir(), name);
    config.job.checkpointDir = CLUSTER.workDir().resolve(name).toUri().toString();
    return config;
  }

  /** Creates the topics, trains on one pass of pairs, and stops with a savepoint: its path. */
  private static String trainAndStop(EmbeddedKafkaBroker kafka, TrainingJobConfig config)
      throws Exception {
    config.validate();
    kafka.createTopics(JobTopics.all(config, 2, (short) 1));
    SyntheticCorpus corpus = corpus();
    try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties());
        TopicReader<TrainingMetrics> metrics =
            new TopicReader<>(
                kafka.clientProperties(), config.metricsTopic(), TrainingMetrics.class)) {
      publisher.publishTargets(config.targetsTopic(), corpus.targets, null);
      JobClient job = TrainingJobs.start(config);
      TrainingJobs.awaitTargetsIndexed(kafka.clientProperties(), config, job);
      publisher.publishPairs(config.pairsTopic(), corpus.train, "e0", 0, null);
      TrainingJobs.awaitStep(
          metrics, new ArrayList<>(), job, corpus.train.size() / config.training.batchSize);
      Path savepoints =
          Files.createDirectories(
              Path.of(config.job.snapshotDir).resolveSibling(config.kafka.groupId + "-savepoints"));
      return job.stopWithSavepoint(
              false, savepoints.toUri().toString(), SavepointFormatType.CANONICAL)
          .get();
    }
  }

  /** The job restored from {@code savepoint}, restarting up to 100 times, a second apart. */
  private static JobClient restore(TrainingJobConfig config, String savepoint) throws Exception {
    return TrainingJobs.start(
        config,
        FaultInjection.NONE,
        TrainingJobs.restarting(100, Duration.ofSeconds(1))
            .andThen(conf -> conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint)));
  }

  /**
   * The message of the {@link DataLossException} {@code job} fails with, within {@link
   * #FAILS_WITHIN}; fails the test if it goes on, finishes, or fails otherwise.
   */
  private static String failureOf(JobClient job) throws Exception {
    try {
      job.getJobExecutionResult().get(FAILS_WITHIN.toSeconds(), TimeUnit.SECONDS);
      return fail("the restored job finished");
    } catch (TimeoutException e) {
      job.cancel().get();
      return fail("the restored job went on (or kept restarting) for " + FAILS_WITHIN);
    } catch (ExecutionException e) {
      String chain = ExceptionUtils.stringifyException(e);
      assertTrue(chain.contains(DataLossException.class.getName()), chain);
      int at = chain.indexOf(DataLossException.class.getName());
      return chain.substring(at, chain.indexOf('\n', at));
    }
  }

  /**
   * The topic's id as the job reads it ({@link TopicFacts}), once its brokers know it (a new
   * topic's metadata spreads in the background).
   */
  private static String topicId(Properties client, String topic) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      try {
        return TopicFacts.describe(client, topic).id();
      } catch (IllegalStateException e) {
        if (!(e.getCause() instanceof UnknownTopicOrPartitionException)
            || System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(200);
      }
    }
  }

  /** Creates the deleted topic again, once it is gone (a deletion completes in the background). */
  private static void recreate(EmbeddedKafkaBroker kafka, TrainingJobConfig config, Admin admin)
      throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      try {
        if (!admin.listTopics().names().get().contains(config.pairsTopic())
            && JobTopics.createMissing(kafka.clientProperties(), config, 2, (short) 1)
                .contains(config.pairsTopic())) {
          return;
        }
      } catch (IllegalStateException e) {
        if (!(e.getCause() instanceof TopicExistsException)) {
          throw e;
        }
      }
      if (System.nanoTime() > deadline) {
        fail("the deleted topic " + config.pairsTopic() + " could not be created again");
      }
      Thread.sleep(200);
    }
  }
}
