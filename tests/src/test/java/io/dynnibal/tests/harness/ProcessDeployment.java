package io.dynnibal.tests.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dynnibal.deploy.FlinkCluster;
import io.dynnibal.deploy.FlinkClusterClient;
import io.dynnibal.deploy.KafkaBroker;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.watch.MetricsWatch;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.function.Predicate;
import java.util.stream.LongStream;

/**
 * The deployment of {@code dynnibal kafka start} and {@code dynnibal cluster start} on loopback,
 * every server a process of its own, for the tests that kill them: a Kafka broker and, unless asked
 * for none, a supervised Flink session cluster. {@link #close} stops whatever runs.
 */
public final class ProcessDeployment implements AutoCloseable {
  public final Path work;
  public final Path kafkaDir;
  public final Path clusterDir;
  private final int kafkaPort;
  private final int controllerPort;
  private KafkaBroker.Status broker;
  private FlinkClusterClient rest;

  private ProcessDeployment(Path work) throws Exception {
    this.work = work;
    this.kafkaDir = work.resolve("kafka");
    this.clusterDir = work.resolve("cluster");
    this.kafkaPort = freePort();
    this.controllerPort = freePort();
  }

  /**
   * A broker, and a supervised cluster of {@code taskManagers} TaskManagers with {@code slots}
   * slots each (none for 0), under a fresh directory named after {@code name}.
   */
  public static ProcessDeployment start(String name, int taskManagers, int slots) throws Exception {
    Path work = WorkDirs.fresh(name).toAbsolutePath();
    ProcessDeployment d = new ProcessDeployment(work);
    try {
      d.broker =
          KafkaBroker.start(d.kafkaDir, d.kafkaPort, d.controllerPort, Duration.ofSeconds(90));
      if (taskManagers > 0) {
        FlinkCluster.Status cluster =
            FlinkCluster.start(
                d.clusterDir,
                new FlinkCluster.Options(
                    freePort(),
                    freePort(),
                    taskManagers,
                    slots,
                    "2g",
                    "768m",
                    freePortRange(taskManagers + 1),
                    true),
                Duration.ofSeconds(120));
        d.rest = new FlinkClusterClient(cluster.restUrl());
      }
      return d;
    } catch (Exception e) {
      d.close();
      throw e;
    }
  }

  public String bootstrap() {
    return broker.bootstrap();
  }

  public FlinkClusterClient rest() {
    return rest;
  }

  public FlinkCluster.Status cluster() throws Exception {
    return FlinkCluster.status(clusterDir);
  }

  /** SIGKILL to the broker, and waits until it is gone. */
  public void killBroker() throws Exception {
    kill(KafkaBroker.status(kafkaDir).pid());
  }

  /** Starts the broker again on its ports and data. */
  public void restartBroker() throws Exception {
    broker = KafkaBroker.start(kafkaDir, kafkaPort, controllerPort, Duration.ofSeconds(90));
  }

  /** SIGKILL to TaskManager {@code i} (from 1); returns its PID. */
  public long killTaskManager(int i) throws Exception {
    long pid = cluster().taskManagerPids().get(i - 1);
    kill(pid);
    return pid;
  }

  /** SIGKILL to the JobManager; returns its PID. */
  public long killJobManager() throws Exception {
    long pid = cluster().jobManagerPid();
    kill(pid);
    return pid;
  }

  /** Waits until the cluster's status satisfies {@code ready}. */
  public FlinkCluster.Status awaitCluster(Predicate<FlinkCluster.Status> ready, Duration timeout)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    FlinkCluster.Status s = cluster();
    while (!ready.test(s)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "the cluster did not recover in "
                + timeout.toSeconds()
                + " s: "
                + s
                + "\nsupervisor log:\n"
                + tail(clusterDir.resolve("log").resolve("supervisor.log")));
      }
      Thread.sleep(300);
      s = cluster();
    }
    return s;
  }

  /**
   * Follows the job's metrics until {@code step}; a job that stalls fails the test with its state
   * and latest failure.
   */
  public MetricsWatch.Seen follow(
      String job, Properties kafka, TrainingJobConfig config, long step, Duration idle)
      throws Exception {
    return follow(rest, job, kafka, config, step, idle);
  }

  /** The same for a job of the cluster {@code rest} answers for. */
  public static MetricsWatch.Seen follow(
      FlinkClusterClient rest,
      String job,
      Properties kafka,
      TrainingJobConfig config,
      long step,
      Duration idle)
      throws Exception {
    MetricsWatch.Seen seen =
        MetricsWatch.follow(
            kafka, config.metricsTopic(), MetricsWatch.Following.until(step, idle), null);
    if (seen.last() == null || seen.last().getStep() < step) {
      throw new AssertionError(
          "no report of step "
              + step
              + " (last: "
              + (seen.last() == null ? "none" : seen.last().getStep())
              + "); job "
              + rest.jobState(job)
              + ", latest failure: "
              + rest.latestFailure(job).orElse("none"));
    }
    return seen;
  }

  /** Every committed report, in topic order (read until the topic has been quiet for 3 s). */
  public static List<TrainingMetrics> committedReports(Properties kafka, TrainingJobConfig config) {
    try (TopicReader<TrainingMetrics> reader =
        new TopicReader<>(kafka, config.metricsTopic(), TrainingMetrics.class)) {
      return reader.readUntilQuiet(Duration.ofSeconds(3));
    }
  }

  /**
   * The exactly-once audit: the committed steps are 1..{@code steps}, each once, and every
   * published pair id appears in exactly one of them.
   */
  public static void assertExactlyOnce(
      List<TrainingMetrics> committed, long steps, List<String> publishedPairIds) {
    assertEquals(
        LongStream.rangeClosed(1, steps).boxed().toList(),
        committed.stream().map(TrainingMetrics::getStep).toList(),
        "committed steps must be 1..n, each once");
    assertEquals(
        publishedPairIds,
        TrainingJobs.trainedPairIds(committed),
        "pairs lost or trained twice (audit by pair id)");
  }

  @Override
  public void close() throws Exception {
    if (rest != null) {
      rest.close();
    }
    try {
      FlinkCluster.stop(clusterDir, Duration.ofSeconds(30));
    } finally {
      KafkaBroker.stop(kafkaDir, Duration.ofSeconds(30));
    }
  }

  private static void kill(long pid) throws Exception {
    ProcessHandle process =
        ProcessHandle.of(pid).orElseThrow(() -> new AssertionError("no process " + pid));
    process.destroyForcibly(); // SIGKILL: no shutdown hook, no clean close
    process.onExit().get();
  }

  private static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (Exception e) {
      return "(none: " + e.getMessage() + ")";
    }
  }

  public static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  /**
   * The first of {@code n} consecutive ports free on loopback (the Prometheus reporters take one
   * each), below the ephemeral range, where the kernel does not hand them to the clients' own
   * connections meanwhile.
   */
  public static int freePortRange(int n) throws Exception {
    java.util.Random random = new java.util.Random();
    for (int attempt = 0; attempt < 100; attempt++) {
      int base = 20_000 + random.nextInt(10_000);
      boolean free = true;
      for (int port = base; port < base + n && free; port++) {
        try (ServerSocket socket = new ServerSocket()) {
          socket.bind(new java.net.InetSocketAddress("127.0.0.1", port));
        } catch (java.io.IOException taken) {
          free = false;
        }
      }
      if (free) {
        return base;
      }
    }
    throw new IllegalStateException("no " + n + " consecutive free ports between 20000 and 30000");
  }
}
