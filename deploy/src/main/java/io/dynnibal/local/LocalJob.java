package io.dynnibal.local;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.training.JobConfiguration;
import io.dynnibal.jobs.training.StateDirectories;
import io.dynnibal.jobs.training.TrainingJob;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.snapshot.ParameterSnapshots;
import io.dynnibal.watch.MetricsWatch;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The training job on an in-process Flink MiniCluster, as the demo and the experiments run it:
 * start it, follow its metrics topic with a progress bar until a step, wait for the final model it
 * writes at {@code max.steps}.
 */
public final class LocalJob {
  private static final String LOOPBACK = "127.0.0.1";

  private LocalJob() {}

  /** What following the metrics topic saw. */
  public record Followed(
      TrainingMetrics first,
      TrainingMetrics last,
      Map<String, Double> meanShardMillis,
      double meanStaleness) {}

  /**
   * Points a benchmark's job at {@code work} (checkpoints and snapshots) and has it train {@code
   * steps} steps, its learning rate decaying over them; validates the result.
   */
  public static void prepareRun(TrainingJobConfig config, Path work, long steps) {
    config.job.checkpointDir = work.resolve("checkpoints").toUri().toString();
    config.job.snapshotDir = work.resolve("snapshots").toString();
    config.job.maxSteps = steps;
    config.training.decaySteps = (int) steps;
    config.validate();
  }

  /**
   * Starts the job on a MiniCluster of {@code parallelism} slots, RocksDB state, restarts on
   * failure.
   */
  public static JobClient start(TrainingJobConfig config, String name) throws Exception {
    return start(config, name, conf -> {});
  }

  /** As above, with {@code extra} applied to the Flink configuration last (a restore, metrics). */
  public static JobClient start(
      TrainingJobConfig config, String name, java.util.function.Consumer<Configuration> extra)
      throws Exception {
    StateDirectories.prepare(config);
    Configuration conf = JobConfiguration.of(config);
    onLoopback(conf);
    conf.set(TaskManagerOptions.NUM_TASK_SLOTS, config.job.parallelism);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
    extra.accept(conf);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(config.job.parallelism);
    TrainingJob.build(env, config);
    return env.executeAsync(name);
  }

  /**
   * Binds every server of the MiniCluster to 127.0.0.1: its blob server and shuffle server would
   * otherwise take Flink's default, every interface, and its REST endpoint the wildcard address.
   */
  static void onLoopback(Configuration conf) {
    conf.set(JobManagerOptions.BIND_HOST, LOOPBACK);
    conf.set(TaskManagerOptions.BIND_HOST, LOOPBACK);
    conf.set(TaskManagerOptions.HOST, LOOPBACK);
    conf.set(RestOptions.ADDRESS, LOOPBACK);
    conf.set(RestOptions.BIND_ADDRESS, LOOPBACK);
  }

  /**
   * A run whose metrics have not advanced for this long has stalled. Steps wait while the shards
   * re-encode every target exactly (the cycle that draws the landmarks), which for a transformer
   * tower on a large corpus lasts far longer than a step: the bound covers that cycle. The job's
   * checkpoint timeout has the same bound.
   */
  static final Duration STALLED = Duration.ofMinutes(30);

  /**
   * The first step waits for the targets on the topic at the start to be indexed, every one encoded
   * by the target tower: for a transformer tower on a large corpus, longer than any later wait.
   */
  static final Duration FIRST_STEP_STALLED = Duration.ofHours(1);

  /**
   * Follows the metrics topic until {@code plannedSteps}, drawing a progress bar labelled {@code
   * label}; fails when the job ends, no step arrives for {@link #STALLED}, or the first for {@link
   * #FIRST_STEP_STALLED}.
   */
  public static Followed follow(
      Properties kafka,
      TrainingJobConfig config,
      JobClient job,
      long plannedSteps,
      String label,
      PrintStream out)
      throws Exception {
    return follow(kafka, config, job, plannedSteps, label, out, m -> {});
  }

  /** As above, handing each report to {@code each} too. */
  public static Followed follow(
      Properties kafka,
      TrainingJobConfig config,
      JobClient job,
      long plannedSteps,
      String label,
      PrintStream out,
      java.util.function.Consumer<TrainingMetrics> each)
      throws Exception {
    Map<String, Double> shardMillis = new TreeMap<>();
    double[] staleness = {0};
    MetricsWatch.Seen seen =
        MetricsWatch.follow(
            kafka,
            config.metricsTopic(),
            MetricsWatch.Following.until(plannedSteps, STALLED)
                .bar(label, plannedSteps)
                .idleBeforeFirst(FIRST_STEP_STALLED)
                .onReport(
                    m -> {
                      each.accept(m);
                      staleness[0] += m.getCacheStalenessSteps();
                      m.getShardSamplingLatencyMs()
                          .forEach((shard, ms) -> shardMillis.merge(shard, ms, Double::sum));
                    })
                .check(() -> failIfEnded(job)),
            out);
    if (seen.last() == null || seen.last().getStep() < plannedSteps) {
      throw new IllegalStateException(
          "no training step for "
              + (seen.last() == null ? FIRST_STEP_STALLED : STALLED).toMinutes()
              + " minutes (last: "
              + (seen.last() == null ? "none" : "step " + seen.last().getStep())
              + " of "
              + plannedSteps
              + ")");
    }
    long n = seen.reports();
    shardMillis.replaceAll((shard, sum) -> sum / n);
    return new Followed(seen.first(), seen.last(), shardMillis, staleness[0] / n);
  }

  /**
   * The final model the trainer writes at {@code step} = {@code max.steps}, once it is there (2
   * minutes at most).
   */
  public static URI awaitFinalModel(TrainingJobConfig config, long step, JobClient job)
      throws Exception {
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    while (System.nanoTime() < deadline) {
      failIfEnded(job);
      Optional<URI> done = model(Path.of(config.job.snapshotDir), "final", step);
      if (done.isPresent()) {
        return done.get();
      }
      Thread.sleep(300);
    }
    throw new IllegalStateException(
        "the trainer wrote no final model at step " + step + " within 2 minutes");
  }

  /**
   * {@code <snapshot dir>/run-<id>/<kind>/model-<step>} ({@code final}, or {@code kept} for {@code
   * keep.model.every}), once complete (snapshots appear atomically).
   */
  public static Optional<URI> model(Path snapshotDir, String kind, long step) throws IOException {
    if (!Files.isDirectory(snapshotDir)) {
      return Optional.empty();
    }
    try (Stream<Path> runs = Files.list(snapshotDir)) {
      for (Path run : runs.filter(p -> p.getFileName().toString().startsWith("run-")).toList()) {
        URI uri = ParameterSnapshots.locate(run.resolve(kind).toUri(), step);
        if (Files.exists(Path.of(uri).resolve("manifest.json"))) {
          return Optional.of(uri);
        }
      }
    }
    return Optional.empty();
  }

  /**
   * Cancels the job unless it has ended, and waits (up to a minute) until it has stopped, so that
   * the next job on this machine does not share it with a shutting-down one.
   */
  public static void stop(JobClient job) throws Exception {
    if (!job.getJobStatus().get().isGloballyTerminalState()) {
      job.cancel().get();
    }
    try {
      job.getJobExecutionResult().get(1, java.util.concurrent.TimeUnit.MINUTES);
    } catch (java.util.concurrent.ExecutionException cancelledOrFailed) {
      // Expected for a cancelled job; a failure was reported by whoever noticed it.
    }
  }

  /**
   * Waits until the job's consumer group has read the targets topic to its end, running {@code
   * whileWaiting} every half second; fails if the job ends first.
   */
  public static void awaitTargetsRead(
      Properties kafka, TrainingJobConfig config, JobClient job, Runnable whileWaiting)
      throws Exception {
    while (!io.dynnibal.jobs.kafka.TopicReader.groupCaughtUp(
        kafka, config.kafka.groupId, config.targetsTopic())) {
      failIfEnded(job);
      Thread.sleep(500);
      whileWaiting.run();
    }
  }

  public static void failIfEnded(JobClient job) throws Exception {
    if (job.getJobStatus().get().isGloballyTerminalState()) {
      job.getJobExecutionResult().get();
      throw new IllegalStateException(
          "the training job ended unexpectedly: " + job.getJobStatus().get());
    }
  }
}
