package io.dynnibal.tests.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.bench.soak.SmallDisk;
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
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The model versions' disk on a real job (broker, MiniCluster, RocksDB; no restarts allowed, so a
 * failure that escapes the trainer fails the test): a full disk costs model updates, not the job,
 * and training resumes publishing them once space is back; a version number another trainer wrote
 * (one a restore superseded that still runs) is numbered past instead of stalling re-encoding.
 * Every published pair is trained exactly once, by pair id.
 */
class SnapshotDiskTest {
  @RegisterExtension
  static final StreamingClusterExtension CLUSTER = StreamingClusterExtension.withTaskManagers(1, 2);

  @Test
  @Timeout(240)
  void aFullDiskCostsModelUpdatesNotTheJobAndTheyResumeWhenSpaceIsBack(EmbeddedKafkaBroker kafka)
      throws Exception {
    try (SmallDisk disk = mount("small-disk", 4)) {
      TrainingJobConfig config = config(kafka, "full-disk");
      config.job.snapshotDir = disk.path().resolve("snapshots").toString();
      Files.createDirectories(disk.path().resolve("snapshots"));
      // Less room than one model version takes.
      disk.fill(64 * 1024);
      try (Run run = new Run(kafka, config, new SyntheticCorpus(80, 160, 6, 3, 23))) {
        TrainingMetrics full = run.pass("full");
        assertEquals(0, full.getModelVersion(), "no version can be written on a full disk");
        assertEquals(JobStatus.RUNNING, run.job.getJobStatus().get(), "the job runs on");
        assertTrue(disk.free() < 256 * 1024, "the disk stayed full: " + disk.free());

        disk.release();
        TrainingMetrics freed = run.pass("freed");
        assertTrue(freed.getModelVersion() >= 1, "model updates resumed: " + freed);
        run.assertExactlyOnce("full", "freed");
      }
    }
  }

  @Test
  @Timeout(240)
  void aFullCheckpointDiskHoldsCommitsBackUntilSpaceIsBackAndLosesNothing(EmbeddedKafkaBroker kafka)
      throws Exception {
    try (SmallDisk disk = mount("checkpoint-disk", 64)) {
      TrainingJobConfig config = config(kafka, "full-checkpoint-disk");
      config.job.checkpointDir = disk.path().resolve("checkpoints").toUri().toString();
      // Aligned barriers: an unaligned checkpoint also writes in-flight data, and Flink's writer of
      // it treats a failed write as fatal to the whole TaskManager (a cluster's supervisor starts
      // a new one; the MiniCluster has no second).
      config.job.checkpointUnaligned = false;
      try (Run run =
          new Run(
              kafka,
              config,
              new SyntheticCorpus(80, 160, 6, 3, 31),
              TrainingJobs.restarting(1000, Duration.ofMillis(300)))) {
        TrainingMetrics before = run.pass("before");
        disk.fill(4 * 1024);
        run.publish("full");
        // No checkpoint can complete, so no step is committed: Flink fails the job over after each
        // failed checkpoint and restores the last completed one.
        List<TrainingMetrics> whileFull = run.metrics.poll(Duration.ofSeconds(8));
        run.seen.addAll(whileFull);
        assertTrue(
            whileFull.stream().allMatch(m -> m.getStep() <= before.getStep()),
            "a step was committed although no checkpoint could complete: " + whileFull);
        disk.release();
        run.awaitPublished();
        assertEquals(
            JobStatus.RUNNING, run.job.getJobStatus().get(), "the job recovered by itself");
        run.assertExactlyOnce("before", "full");
      }
    }
  }

  @Test
  @Timeout(240)
  void aVersionAnotherTrainerWroteIsNumberedPast(EmbeddedKafkaBroker kafka) throws Exception {
    TrainingJobConfig config = config(kafka, "taken-version");
    try (Run run = new Run(kafka, config, new SyntheticCorpus(80, 160, 6, 3, 29))) {
      TrainingMetrics first = run.pass("first");
      long held = first.getModelVersion();
      assertTrue(held >= 1, "re-encoding had started: " + first);
      // What a superseded trainer that still runs leaves: the next two numbers, written first.
      Path runDir = runDirectory(Path.of(config.job.snapshotDir));
      for (long v = held + 1; v <= held + 2; v++) {
        Path taken = runDir.resolve(String.format("model-%012d", v));
        Files.createDirectories(taken);
        Files.writeString(taken.resolve("manifest.json"), "{}");
      }
      TrainingMetrics after = run.pass("second");
      assertTrue(
          after.getModelVersion() > held + 2,
          "re-encoding went on past the taken numbers "
              + (held + 1)
              + ", "
              + (held + 2)
              + ": "
              + after);
      run.assertExactlyOnce("first", "second");
    }
  }

  /** A tmpfs of {@code megabytes} under the class's directory; the test is skipped without root. */
  private static SmallDisk mount(String name, int megabytes) throws Exception {
    SmallDisk.Result mounted = SmallDisk.mount(CLUSTER.workDir().resolve(name), megabytes);
    Assumptions.assumeTrue(mounted.disk() != null, mounted.refused());
    return mounted.disk();
  }

  private static TrainingJobConfig config(EmbeddedKafkaBroker kafka, String name) {
    TrainingJobConfig config = TrainingJobs.smallConfig(kafka, CLUSTER.workDir(), name);
    config.job.snapshotDir = CLUSTER.workDir().resolve(name + "-snapshots").toString();
    return config;
  }

  private static Path runDirectory(Path snapshotDir) throws Exception {
    try (Stream<Path> runs = Files.list(snapshotDir)) {
      List<Path> found = runs.filter(p -> p.getFileName().toString().startsWith("run-")).toList();
      assertEquals(1, found.size(), "one run directory: " + found);
      return found.get(0);
    }
  }

  /** One job over a corpus: targets indexed, then passes of its training pairs. */
  private static final class Run implements AutoCloseable {
    private final TrainingJobConfig config;
    private final SyntheticCorpus corpus;
    private final CorpusPublisher publisher;
    private final TopicReader<TrainingMetrics> metrics;
    private final List<TrainingMetrics> seen = new ArrayList<>();
    private final JobClient job;
    private long published;

    Run(EmbeddedKafkaBroker kafka, TrainingJobConfig config, SyntheticCorpus corpus)
        throws Exception {
      this(kafka, config, corpus, conf -> {});
    }

    Run(
        EmbeddedKafkaBroker kafka,
        TrainingJobConfig config,
        SyntheticCorpus corpus,
        Consumer<Configuration> restarts)
        throws Exception {
      this.config = config;
      this.corpus = corpus;
      config.validate();
      kafka.createTopics(JobTopics.all(config, 2, (short) 1));
      publisher = new CorpusPublisher(kafka.clientProperties());
      metrics =
          new TopicReader<>(kafka.clientProperties(), config.metricsTopic(), TrainingMetrics.class);
      publisher.publishTargets(config.targetsTopic(), corpus.targets, null);
      job = TrainingJobs.start(config, FaultInjection.NONE, restarts);
      TrainingJobs.awaitTargetsIndexed(kafka.clientProperties(), config, job);
    }

    /** Publishes one pass of the training pairs and waits until all are trained. */
    TrainingMetrics pass(String name) throws Exception {
      publish(name);
      return awaitPublished();
    }

    void publish(String name) {
      publisher.publishPairs(config.pairsTopic(), corpus.train, name, 0, null);
      published += corpus.train.size();
    }

    /** Waits until every pair published so far is trained, in committed steps. */
    TrainingMetrics awaitPublished() throws Exception {
      return TrainingJobs.awaitStep(metrics, seen, job, published / config.training.batchSize);
    }

    void assertExactlyOnce(String... passes) throws Exception {
      seen.addAll(metrics.poll(Duration.ofSeconds(1)));
      assertEquals(
          TrainingJobs.publishedPairIds(corpus.train, passes),
          TrainingJobs.trainedPairIds(seen),
          "pairs lost or trained twice");
    }

    @Override
    public void close() throws Exception {
      try {
        job.cancel().get();
      } finally {
        metrics.close();
        publisher.close();
      }
    }
  }
}
