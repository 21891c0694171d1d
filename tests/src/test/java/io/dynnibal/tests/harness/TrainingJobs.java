package io.dynnibal.tests.harness;

import static org.junit.jupiter.api.Assertions.fail;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.jobs.training.JobConfiguration;
import io.dynnibal.jobs.training.TrainingJob;
import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.trainer.FaultInjection;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * What the streaming-job tests share: a small job configuration, starting the job, and waiting on
 * its metrics.
 */
public final class TrainingJobs {
  private TrainingJobs() {}

  /**
   * A job small enough for a test on 2 cores (tiny model, batches of 10, a re-encode cycle every 6
   * steps, 500 ms checkpoints) on {@code kafka}, with its state under {@code workDir}. Tests change
   * what they need before validating.
   */
  public static TrainingJobConfig smallConfig(
      EmbeddedKafkaBroker kafka, Path workDir, String name) {
    return smallConfig(kafka.bootstrapServers(), workDir, name);
  }

  /** The same for a broker at {@code bootstrapServers}. */
  public static TrainingJobConfig smallConfig(String bootstrapServers, Path workDir, String name) {
    TrainingJobConfig c = new TrainingJobConfig();
    c.kafka.bootstrapServers = bootstrapServers;
    c.kafka.topicPrefix = name + ".";
    c.kafka.groupId = name;
    c.job.checkpointDir = workDir.resolve("checkpoints").toUri().toString();
    c.job.checkpointInterval = Duration.ofMillis(500);
    c.job.snapshotDir = workDir.resolve("snapshots").toString();
    c.training.batchSize = 10;
    c.negatives.negativesUniform = 8;
    c.reencode.reencodeEvery = 6;
    c.index.landmarks = 8;
    c.reencode.regressionSamples = 32;
    c.model.modelBuckets = 4096;
    c.model.modelEmbeddingDim = 32;
    c.model.modelHiddenDim = 64;
    c.model.modelOutputDim = 32;
    c.training.warmupSteps = 5;
    return c;
  }

  /**
   * Submits the job to the test's MiniCluster; no restarts unless {@code tweak} configures them.
   */
  public static JobClient start(
      TrainingJobConfig config, FaultInjection faults, Consumer<Configuration> tweak)
      throws Exception {
    Configuration conf = JobConfiguration.of(config);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    tweak.accept(conf);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(config.job.parallelism);
    TrainingJob.build(env, config, faults);
    return env.executeAsync(config.kafka.groupId);
  }

  /**
   * A {@code tweak} for {@link #start}: restart up to {@code attempts} times, {@code delay} apart.
   */
  public static Consumer<Configuration> restarting(int attempts, Duration delay) {
    return conf -> {
      conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
      conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, attempts);
      conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, delay);
    };
  }

  public static JobClient start(TrainingJobConfig config) throws Exception {
    return start(config, FaultInjection.NONE, conf -> {});
  }

  /** Fails the test if the job ended (with its failure) or the deadline passed. */
  public static void check(JobClient job, long deadline, String waitingFor) throws Exception {
    if (job.getJobStatus().get().isGloballyTerminalState()) {
      job.getJobExecutionResult().get(); // throws the job's failure
      fail("the job ended while waiting for " + waitingFor);
    }
    if (System.nanoTime() > deadline) {
      fail("timed out waiting for " + waitingFor);
    }
  }

  /**
   * Waits until every target published so far went through a completed checkpoint of the job (so it
   * is indexed).
   */
  public static void awaitTargetsIndexed(Properties client, TrainingJobConfig config, JobClient job)
      throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!TopicReader.groupCaughtUp(client, config.kafka.groupId, config.targetsTopic())) {
      check(job, deadline, "the targets to be indexed");
      Thread.sleep(200);
    }
  }

  /**
   * Reads metrics into {@code seen} (all of every poll) until one satisfies {@code done}; returns
   * the newest record.
   */
  public static TrainingMetrics await(
      TopicReader<TrainingMetrics> reader,
      List<TrainingMetrics> seen,
      JobClient job,
      Duration timeout,
      Predicate<TrainingMetrics> done)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      List<TrainingMetrics> polled = reader.poll(Duration.ofMillis(200));
      seen.addAll(polled);
      if (polled.stream().anyMatch(done)) {
        return seen.get(seen.size() - 1);
      }
      check(job, deadline, "training metrics");
    }
  }

  public static TrainingMetrics awaitStep(
      TopicReader<TrainingMetrics> reader, List<TrainingMetrics> seen, JobClient job, long step)
      throws Exception {
    return await(reader, seen, job, Duration.ofSeconds(150), m -> m.getStep() >= step);
  }

  /** Every pair id the committed steps trained, sorted (repeats stay: an audit must see them). */
  public static List<String> trainedPairIds(List<TrainingMetrics> metrics) {
    return metrics.stream().flatMap(m -> m.getPairIds().stream()).sorted().toList();
  }

  /**
   * The pair ids {@code CorpusPublisher.publishPairs} gives {@code queries} over these passes,
   * sorted.
   */
  public static List<String> publishedPairIds(List<LabelledQuery> queries, String... passes) {
    return Stream.of(passes)
        .flatMap(pass -> queries.stream().map(q -> q.queryId() + "#" + pass))
        .sorted()
        .toList();
  }
}
