package io.dynnibal.deploy;

import io.dynnibal.deploy.metrics.BoundPrometheusReporterFactory;
import io.dynnibal.deploy.metrics.ClusterMetricsJar;
import java.io.Closeable;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessSpec;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessUtils;
import org.apache.flink.runtime.jobmanager.JobManagerProcessSpec;
import org.apache.flink.runtime.jobmanager.JobManagerProcessUtils;
import org.apache.flink.runtime.util.config.memory.ProcessMemoryUtils;

/**
 * A Flink standalone session cluster on this machine, from the jars this CLI runs with (no Flink
 * distribution): one JobManager and N TaskManagers, each a JVM of its own, managed through one
 * directory:
 *
 * <pre>
 * conf/config.yaml, conf/log4j.properties   written by start; the processes read them
 * jobmanager.pid, taskmanager-1.pid, ...      one per process (see DaemonProcess); taskmanagers: how many
 * supervisor.pid, restarts.json               the supervisor that restarts them (ClusterSupervisor)
 * log/jobmanager.log, log/taskmanager-1.log   Flink's logs (what the web UI shows); *.out: stdout and stderr
 * log/supervisor.log                          one line per exit and restart
 * checkpoints/, savepoints/                   the cluster's state directories (submit points the job's there)
 * </pre>
 *
 * What flink-dist's scripts do, done here: the JVM memory flags and dynamic settings come from the
 * same code as {@code BashJavaUtils GET_JM_RESOURCE_PARAMS / GET_TM_RESOURCE_PARAMS} (a TaskManager
 * refuses to start without them), Java 17 gets flink-dist's module openings, and DJL sits on the
 * cluster classpath ({@link ClasspathSplit}). Everything listens on 127.0.0.1 (the Prometheus
 * reporters where {@link Options} says). The directory's processes are {@link ClusterLayout}'s, its
 * {@code conf/} {@link ClusterConfiguration}'s, their command lines {@link ClusterJvm}'s.
 */
public final class FlinkCluster {
  /**
   * How to start a cluster.
   *
   * @param prometheusHost the address the Prometheus reporters serve on; every other server of the
   *     cluster is on 127.0.0.1
   */
  public record Options(
      int restPort,
      int rpcPort,
      int taskManagers,
      int slotsPerTaskManager,
      String taskManagerMemory,
      String jobManagerMemory,
      int prometheusPort,
      String prometheusHost,
      boolean supervise) {
    /** Metrics on loopback too. */
    public Options(
        int restPort,
        int rpcPort,
        int taskManagers,
        int slotsPerTaskManager,
        String taskManagerMemory,
        String jobManagerMemory,
        int prometheusPort,
        boolean supervise) {
      this(
          restPort,
          rpcPort,
          taskManagers,
          slotsPerTaskManager,
          taskManagerMemory,
          jobManagerMemory,
          prometheusPort,
          BoundPrometheusReporterFactory.DEFAULT_HOST,
          supervise);
    }

    /**
     * The Prometheus reporters' ports: the first free one of this range for each process (the
     * JobManager and every TaskManager).
     */
    String prometheusPorts() {
      return prometheusPort + "-" + (prometheusPort + taskManagers);
    }
  }

  /**
   * What {@link #status} finds: the processes that run, and what the JobManager's REST API says.
   */
  public record Status(
      URI restUrl,
      long jobManagerPid,
      List<Long> taskManagerPids,
      Optional<FlinkClusterClient.Overview> overview,
      List<URI> prometheus,
      long supervisorPid,
      Map<String, Integer> restarts) {
    public boolean running() {
      return jobManagerPid > 0;
    }

    /** Every process runs and every TaskManager has registered. */
    public boolean ready() {
      return running()
          && taskManagerPids.stream().allMatch(p -> p > 0)
          && overview.isPresent()
          && overview.get().taskManagers() == taskManagerPids.size();
    }
  }

  private FlinkCluster() {}

  /**
   * Writes the configuration, starts the JobManager, waits for its REST API, starts the
   * TaskManagers and waits until all have registered.
   *
   * @throws IllegalStateException when a cluster runs on {@code dir} already, or a process exits or
   *     the cluster is not ready within {@code timeout} (the failing process's log tail is in the
   *     message; what started is stopped)
   */
  public static Status start(Path dir, Options options, Duration timeout) throws Exception {
    dir = dir.toAbsolutePath();
    try (Closeable lock = DaemonProcess.lock(dir)) {
      return startLocked(dir, options, timeout);
    }
  }

  private static Status startLocked(Path dir, Options options, Duration timeout) throws Exception {
    // The servers run in sessions of their own, so a Ctrl-C while this command waits reaches only
    // this JVM: what it started so far is stopped here instead.
    Path stopDir = dir;
    try (CleanupOnExit interrupted =
        CleanupOnExit.register(
            () -> {
              try {
                stopLocked(stopDir, Duration.ofSeconds(10));
              } catch (Exception e) {
                System.err.println("stopping what started: " + e);
              }
            })) {
      return startServers(dir, options, timeout);
    }
  }

  private static Status startServers(Path dir, Options options, Duration timeout) throws Exception {
    Status current = status(dir);
    if (current.running() || current.taskManagerPids().stream().anyMatch(pid -> pid > 0)) {
      throw new IllegalStateException("a Flink cluster runs on " + dir + " already; stop it first");
    }
    DaemonProcess.requireFree("REST API, --rest-port", options.restPort());
    DaemonProcess.requireFree("JobManager RPC, --rpc-port", options.rpcPort());
    Path conf = ClusterConfiguration.write(dir, options);
    Configuration configuration = GlobalConfiguration.loadConfiguration(conf.toString());
    String classpath =
        ClasspathSplit.ofThisJvm().clusterClasspath()
            + File.pathSeparator
            + ClusterMetricsJar.write(dir.resolve("lib").resolve("dynnibal-cluster-metrics.jar"));
    long deadline = System.nanoTime() + timeout.toNanos();
    URI rest = ClusterConfiguration.restUrl(configuration);
    try (FlinkClusterClient client = new FlinkClusterClient(rest)) {
      JobManagerProcessSpec jm = JobManagerProcessUtils.processSpecFromConfig(configuration);
      List<String> jmCommand =
          ClusterJvm.command(
              dir,
              "jobmanager",
              JobManagerProcessUtils.generateJvmParametersStr(jm, configuration),
              List.of(),
              classpath,
              ClusterLayout.JOB_MANAGER,
              JobManagerProcessUtils.generateDynamicConfigsStr(jm));
      List<Started> started = new ArrayList<>();
      DaemonProcess jobManager = ClusterLayout.jobManager(dir);
      started.add(new Started(jobManager.start(jmCommand, Map.of()), jobManager));
      awaitReady(
          started,
          deadline,
          () -> client.overview().isPresent(),
          "the JobManager's REST API at " + rest);

      TaskExecutorProcessSpec tm = TaskExecutorProcessUtils.processSpecFromConfig(configuration);
      for (int i = 1; i <= options.taskManagers(); i++) {
        List<String> tmCommand =
            ClusterJvm.command(
                dir,
                "taskmanager-" + i,
                ProcessMemoryUtils.generateJvmParametersStr(tm),
                ClusterJvm.DJL_PROPERTIES,
                classpath,
                ClusterLayout.TASK_MANAGER,
                TaskExecutorProcessUtils.generateDynamicConfigsStr(tm));
        DaemonProcess taskManager = ClusterLayout.taskManager(dir, i);
        // libtorch's OpenMP pool, like the DJL properties.
        started.add(
            new Started(taskManager.start(tmCommand, Map.of("OMP_NUM_THREADS", "1")), taskManager));
      }
      int slots = options.taskManagers() * options.slotsPerTaskManager();
      awaitReady(
          started,
          deadline,
          () ->
              client
                  .overview()
                  .map(o -> o.taskManagers() >= options.taskManagers() && o.slotsTotal() >= slots)
                  .orElse(false),
          options.taskManagers() + " registered TaskManager(s) with " + slots + " slots");
      Files.deleteIfExists(ClusterSupervisor.restartsFile(dir));
      if (options.supervise()) {
        ClusterLayout.supervisor(dir)
            .start(
                List.of(
                    DaemonProcess.java(),
                    "-Xmx64m",
                    "-XX:+UseSerialGC",
                    "-cp",
                    System.getProperty("java.class.path"),
                    ClusterSupervisor.class.getName(),
                    dir.toString()),
                Map.of());
      }
      return status(dir);
    } catch (Exception e) {
      try {
        stopLocked(dir, Duration.ofSeconds(10));
      } catch (Exception cleanup) {
        e.addSuppressed(cleanup);
      }
      throw e;
    }
  }

  private record Started(Process process, DaemonProcess daemon) {}

  /**
   * Stops the supervisor (so that nothing is restarted), the TaskManagers (all at once), then the
   * JobManager: SIGTERM, SIGKILL after {@code grace}. Running jobs end without a savepoint; their
   * retained checkpoints stay. False when no process ran.
   */
  public static boolean stop(Path dir, Duration grace) throws Exception {
    dir = dir.toAbsolutePath();
    if (!Files.isDirectory(dir)) {
      return false;
    }
    try (Closeable lock = DaemonProcess.lock(dir)) {
      return stopLocked(dir, grace);
    }
  }

  private static boolean stopLocked(Path dir, Duration grace) throws Exception {
    boolean supervised = ClusterLayout.supervisor(dir).stop(grace);
    boolean any = DaemonProcess.stopAll(ClusterLayout.taskManagers(dir), grace);
    return ClusterLayout.jobManager(dir).stop(grace) || any || supervised;
  }

  /**
   * Which processes of the cluster on {@code dir} run, and the JobManager's view when it answers.
   */
  public static Status status(Path dir) throws IOException {
    dir = dir.toAbsolutePath();
    long jm = pid(ClusterLayout.jobManager(dir));
    List<Long> tms = new ArrayList<>();
    for (DaemonProcess taskManager : ClusterLayout.taskManagers(dir)) {
      tms.add(pid(taskManager));
    }
    URI rest = ClusterConfiguration.restUrl(dir);
    Optional<FlinkClusterClient.Overview> overview = Optional.empty();
    if (jm > 0 && rest != null) {
      try (FlinkClusterClient client = new FlinkClusterClient(rest)) {
        overview = client.overview();
      }
    }
    return new Status(
        rest,
        jm,
        tms,
        overview,
        jm > 0 ? ClusterConfiguration.answeringPrometheus(dir) : List.of(),
        pid(ClusterLayout.supervisor(dir)),
        ClusterSupervisor.restarts(dir));
  }

  /** The process's pid while it runs, else -1. */
  private static long pid(DaemonProcess process) throws IOException {
    return process.find().map(ProcessHandle::pid).orElse(-1L);
  }

  /**
   * Waits for {@code ready}; fails as soon as one of the started processes has exited, with its
   * output.
   */
  private static void awaitReady(
      List<Started> started, long deadline, BooleanSupplier ready, String what) throws Exception {
    while (true) {
      for (Started s : started) {
        if (!s.process().isAlive()) {
          throw new IllegalStateException(
              "waiting for "
                  + what
                  + ": the process exited with code "
                  + s.process().exitValue()
                  + "; its output ("
                  + s.daemon().log()
                  + "):\n"
                  + s.daemon().tail(30));
        }
      }
      if (ready.getAsBoolean()) {
        return;
      }
      if (System.nanoTime() > deadline) {
        Started last = started.get(started.size() - 1);
        throw new IllegalStateException(
            "no "
                + what
                + " in time; the output of "
                + last.daemon().log()
                + ":\n"
                + last.daemon().tail(30));
      }
      Thread.sleep(300);
    }
  }
}
