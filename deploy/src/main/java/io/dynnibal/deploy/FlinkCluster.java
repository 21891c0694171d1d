package io.dynnibal.deploy;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.function.BooleanSupplier;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessSpec;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessUtils;
import org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint;
import org.apache.flink.runtime.jobmanager.JobManagerProcessSpec;
import org.apache.flink.runtime.jobmanager.JobManagerProcessUtils;
import org.apache.flink.runtime.taskexecutor.TaskManagerRunner;
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
 * cluster classpath ({@link ClasspathSplit}). Everything listens on 127.0.0.1.
 */
public final class FlinkCluster {
  /** How to start a cluster. */
  public record Options(
      int restPort,
      int rpcPort,
      int taskManagers,
      int slotsPerTaskManager,
      String taskManagerMemory,
      String jobManagerMemory,
      int prometheusPort,
      boolean supervise) {
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

  /**
   * flink-dist's {@code env.java.opts.all} for Java 17: Flink reflects into these JDK packages
   * (Kryo, the memory manager, the RPC system). One list for the CLI jar's manifest and these JVMs:
   * the root pom's properties. Plus the Vector API's module, which the index's inner products run
   * on ({@code VectorMath}).
   */
  static final List<String> JAVA_17_OPENINGS = javaModuleOpenings();

  /**
   * DJL in a TaskManager: libtorch from the native jar on the classpath (offline), one intra-op and
   * one inter-op thread per user (each slot is a thread; more make OpenMP spin on few cores).
   */
  static final List<String> DJL_PROPERTIES =
      List.of(
          "-Dai.djl.offline=true",
          "-Dai.djl.pytorch.num_threads=1",
          "-Dai.djl.pytorch.num_interop_threads=1");

  private static final String JOB_MANAGER = StandaloneSessionClusterEntrypoint.class.getName();
  private static final String TASK_MANAGER = TaskManagerRunner.class.getName();

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
    Path conf = writeConfiguration(dir, options);
    Configuration configuration = GlobalConfiguration.loadConfiguration(conf.toString());
    String classpath = ClasspathSplit.ofThisJvm().clusterClasspath();
    long deadline = System.nanoTime() + timeout.toNanos();
    URI rest = restUrl(configuration);
    try (FlinkClusterClient client = new FlinkClusterClient(rest)) {
      JobManagerProcessSpec jm = JobManagerProcessUtils.processSpecFromConfig(configuration);
      List<String> jmCommand =
          command(
              dir,
              "jobmanager",
              JobManagerProcessUtils.generateJvmParametersStr(jm, configuration),
              List.of(),
              classpath,
              JOB_MANAGER,
              JobManagerProcessUtils.generateDynamicConfigsStr(jm));
      List<Started> started = new ArrayList<>();
      started.add(new Started(jobManager(dir).start(jmCommand, Map.of()), jobManager(dir)));
      awaitReady(
          started,
          deadline,
          () -> client.overview().isPresent(),
          "the JobManager's REST API at " + rest);

      TaskExecutorProcessSpec tm = TaskExecutorProcessUtils.processSpecFromConfig(configuration);
      for (int i = 1; i <= options.taskManagers(); i++) {
        List<String> tmCommand =
            command(
                dir,
                "taskmanager-" + i,
                ProcessMemoryUtils.generateJvmParametersStr(tm),
                DJL_PROPERTIES,
                classpath,
                TASK_MANAGER,
                TaskExecutorProcessUtils.generateDynamicConfigsStr(tm));
        // libtorch's OpenMP pool, like the DJL properties.
        started.add(
            new Started(
                taskManager(dir, i).start(tmCommand, Map.of("OMP_NUM_THREADS", "1")),
                taskManager(dir, i)));
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
        supervisor(dir)
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
    boolean supervised = supervisor(dir).stop(grace);
    List<DaemonProcess> taskManagers = new ArrayList<>();
    for (int i = 1; i <= taskManagerCount(dir); i++) {
      taskManagers.add(taskManager(dir, i));
    }
    boolean any = DaemonProcess.stopAll(taskManagers, grace);
    return jobManager(dir).stop(grace) || any || supervised;
  }

  /** The cluster's servers, the JobManager first: what the supervisor keeps running. */
  static List<DaemonProcess> servers(Path dir) throws IOException {
    List<DaemonProcess> servers = new ArrayList<>(List.of(jobManager(dir)));
    for (int i = 1; i <= taskManagerCount(dir); i++) {
      servers.add(taskManager(dir, i));
    }
    return servers;
  }

  /**
   * Which processes of the cluster on {@code dir} run, and the JobManager's view when it answers.
   */
  public static Status status(Path dir) throws IOException {
    dir = dir.toAbsolutePath();
    long jm = jobManager(dir).find().map(ProcessHandle::pid).orElse(-1L);
    List<Long> tms = new ArrayList<>();
    for (int i = 1; i <= taskManagerCount(dir); i++) {
      tms.add(taskManager(dir, i).find().map(ProcessHandle::pid).orElse(-1L));
    }
    Path conf = dir.resolve("conf");
    URI rest =
        Files.exists(conf.resolve("config.yaml"))
            ? restUrl(GlobalConfiguration.loadConfiguration(conf.toString()))
            : null;
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
        jm > 0 ? prometheus(conf) : List.of(),
        supervisor(dir).find().map(ProcessHandle::pid).orElse(-1L),
        ClusterSupervisor.restarts(dir));
  }

  /** The Prometheus endpoints of the cluster's processes that answer. */
  private static List<URI> prometheus(Path conf) {
    if (!Files.exists(conf.resolve("config.yaml"))) {
      return List.of();
    }
    String range =
        GlobalConfiguration.loadConfiguration(conf.toString())
            .getOptional(PROMETHEUS_PORT)
            .orElse("")
            .trim();
    if (!range.matches("\\d+-\\d+")) {
      return List.of();
    }
    String[] bounds = range.split("-");
    List<URI> answering = new ArrayList<>();
    for (int port = Integer.parseInt(bounds[0]); port <= Integer.parseInt(bounds[1]); port++) {
      URI uri = URI.create("http://127.0.0.1:" + port + "/metrics");
      try {
        HttpURLConnection c = (HttpURLConnection) uri.toURL().openConnection();
        c.setConnectTimeout(300);
        // A busy TaskManager (two cores shared with training) took over a second to answer.
        c.setReadTimeout(5000);
        if (c.getResponseCode() == 200) {
          answering.add(uri);
        }
        c.disconnect();
      } catch (IOException e) {
        // nothing listens there
      }
    }
    return answering;
  }

  private static final org.apache.flink.configuration.ConfigOption<String> PROMETHEUS_PORT =
      org.apache.flink.configuration.ConfigOptions.key("metrics.reporter.prom.port")
          .stringType()
          .noDefaultValue();

  /**
   * The configuration a cluster on {@code dir} runs with: what the files under {@code conf/} say.
   */
  static Path writeConfiguration(Path dir, Options options) throws IOException {
    Path conf = Files.createDirectories(dir.resolve("conf"));
    Files.createDirectories(dir.resolve("log"));
    String yaml =
        String.join(
            "\n",
            "# Written by `dynnibal cluster start`; rewritten on every start.",
            "jobmanager.rpc.address: 127.0.0.1",
            "jobmanager.rpc.port: " + options.rpcPort(),
            "jobmanager.bind-host: 127.0.0.1",
            "jobmanager.memory.process.size: " + options.jobManagerMemory(),
            "taskmanager.host: 127.0.0.1",
            "taskmanager.bind-host: 127.0.0.1",
            "taskmanager.numberOfTaskSlots: " + options.slotsPerTaskManager(),
            "taskmanager.memory.process.size: " + options.taskManagerMemory(),
            // libtorch allocates outside the heap and DJL copies through direct buffers: room for
            // both.
            "taskmanager.memory.task.off-heap.size: 512m",
            // RocksDB's block cache and write buffers come from managed memory; the trainer needs
            // heap more.
            "taskmanager.memory.managed.fraction: 0.15",
            // Every process is on this machine: one that misses heartbeats for 20 s is gone, and a
            // job waits that long (not Flink's 50 s default) before it restores elsewhere.
            "heartbeat.interval: 4000",
            "heartbeat.timeout: 20000",
            // A shard that runs ahead of the slowest holds few batches mined with an old model:
            // network buffers sized to about a second of throughput (see TrainingJob).
            "taskmanager.network.memory.buffer-debloat.enabled: true",
            "rest.address: 127.0.0.1",
            "rest.bind-address: 127.0.0.1",
            "rest.port: " + options.restPort(),
            "web.upload.dir: " + dir.resolve("web-upload"),
            "io.tmp.dirs: " + Files.createDirectories(dir.resolve("tmp")),
            "state.backend.type: rocksdb",
            "execution.checkpointing.incremental: true",
            "execution.checkpointing.dir: " + dir.resolve("checkpoints").toUri(),
            "execution.checkpointing.savepoint-dir: " + dir.resolve("savepoints").toUri(),
            // DJL lives on this classpath; a job's class loader must never load a second copy
            // (libtorch loads once).
            "classloader.parent-first-patterns.additional: ai.djl.",
            // Every process serves its metrics (the job's under `dynnibal_`) to Prometheus.
            "metrics.reporter.prom.factory.class: "
                + "org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
            "metrics.reporter.prom.port: " + options.prometheusPorts(),
            "");
    Files.writeString(conf.resolve("config.yaml"), yaml);
    Files.writeString(
        dir.resolve("taskmanagers"),
        Integer.toString(options.taskManagers())); // what stop looks for
    Files.writeString(
        conf.resolve("log4j.properties"),
        String.join(
            "\n",
            "rootLogger.level = INFO",
            "rootLogger.appenderRef.main.ref = MainAppender",
            "appender.main.name = MainAppender",
            "appender.main.type = RollingFile",
            "appender.main.append = true",
            "appender.main.fileName = ${sys:log.file}",
            "appender.main.filePattern = ${sys:log.file}.%i",
            "appender.main.layout.type = PatternLayout",
            "appender.main.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5level %-60c %x - %m%n",
            "appender.main.policies.type = Policies",
            "appender.main.policies.size.type = SizeBasedTriggeringPolicy",
            "appender.main.policies.size.size = 100MB",
            "appender.main.strategy.type = DefaultRolloverStrategy",
            "appender.main.strategy.max = 5",
            "logger.kafka.name = org.apache.kafka",
            "logger.kafka.level = WARN",
            ""));
    return conf;
  }

  private static List<String> command(
      Path dir,
      String name,
      String memoryFlags,
      List<String> properties,
      String classpath,
      String mainClass,
      String dynamicConfigs) {
    List<String> command = new ArrayList<>(List.of(DaemonProcess.java()));
    command.addAll(Arrays.asList(memoryFlags.trim().split("\\s+")));
    command.addAll(JAVA_17_OPENINGS);
    command.addAll(properties);
    command.add("-Dlog.file=" + dir.resolve("log").resolve(name + ".log"));
    command.add(
        "-Dlog4j.configurationFile=" + dir.resolve("conf").resolve("log4j.properties").toUri());
    command.addAll(
        List.of("-cp", classpath, mainClass, "--configDir", dir.resolve("conf").toString()));
    command.addAll(Arrays.asList(dynamicConfigs.trim().split("\\s+")));
    return command;
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

  private static List<String> javaModuleOpenings() {
    Properties p = new Properties();
    try (InputStream in =
        FlinkCluster.class.getResourceAsStream("java-module-openings.properties")) {
      p.load(in);
    } catch (IOException | NullPointerException e) {
      throw new IllegalStateException(
          "java-module-openings.properties is missing from the build", e);
    }
    List<String> flags = new ArrayList<>();
    // The index's inner products run on the Vector API when the module is there (VectorMath); the
    // daemons run this JVM's java, which refuses to start if asked for a module its image lacks.
    if (java.lang.module.ModuleFinder.ofSystem().find("jdk.incubator.vector").isPresent()) {
      flags.add("--add-modules=jdk.incubator.vector");
    }
    for (String module : p.getProperty("exports").trim().split("\\s+")) {
      flags.add("--add-exports=" + module + "=ALL-UNNAMED");
    }
    for (String module : p.getProperty("opens").trim().split("\\s+")) {
      flags.add("--add-opens=" + module + "=ALL-UNNAMED");
    }
    return List.copyOf(flags);
  }

  private static URI restUrl(Configuration configuration) {
    return URI.create("http://127.0.0.1:" + configuration.get(RestOptions.PORT) + "/");
  }

  private static DaemonProcess jobManager(Path dir) {
    return new DaemonProcess(
        dir.resolve("jobmanager.pid"), dir.resolve("log").resolve("jobmanager.out"), JOB_MANAGER);
  }

  private static DaemonProcess supervisor(Path dir) {
    return new DaemonProcess(
        dir.resolve("supervisor.pid"),
        dir.resolve("log").resolve("supervisor.log"),
        ClusterSupervisor.class.getName());
  }

  private static DaemonProcess taskManager(Path dir, int i) {
    return new DaemonProcess(
        dir.resolve("taskmanager-" + i + ".pid"),
        dir.resolve("log").resolve("taskmanager-" + i + ".out"),
        TASK_MANAGER);
  }

  private static int taskManagerCount(Path dir) throws IOException {
    Path count = dir.resolve("taskmanagers");
    return Files.exists(count) ? Integer.parseInt(Files.readString(count).trim()) : 0;
  }
}
