package io.dynnibal.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.dynnibal.deploy.FlinkCluster;
import io.dynnibal.deploy.FlinkClusterClient;
import io.dynnibal.deploy.JobJar;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code dynnibal cluster start|stop|status|job-jar}: a Flink standalone session cluster on this
 * machine.
 */
@Command(
    name = "cluster",
    description = {
      "Run a Flink standalone session cluster on this machine from the CLI's own jars.",
      "A JobManager and N TaskManagers, each its own process (PID files and logs under --dir), RocksDB state, DJL on",
      "the cluster classpath, REST API and web UI on 127.0.0.1."
    },
    subcommands = {
      ClusterCommand.Start.class,
      ClusterCommand.Stop.class,
      ClusterCommand.Status.class,
      ClusterCommand.WriteJobJar.class
    })
final class ClusterCommand {
  static class DirOption {
    @Option(
        names = "--dir",
        defaultValue = "dynnibal-cluster",
        description =
            "Cluster directory: conf/, log/, *.pid, checkpoints/, savepoints/, snapshots/ (default ${DEFAULT-VALUE}).")
    Path dir;
  }

  @Command(
      name = "start",
      description = "Start the JobManager and the TaskManagers; wait until all have registered.")
  static final class Start extends DirOption implements Callable<Integer> {
    @Option(
        names = "--taskmanagers",
        defaultValue = "1",
        description = "TaskManager processes (default ${DEFAULT-VALUE}).")
    int taskManagers;

    @Option(
        names = "--slots",
        defaultValue = "2",
        description =
            "Task slots per TaskManager (default ${DEFAULT-VALUE}); a job needs `parallelism` slots.")
    int slots;

    @Option(
        names = "--rest-port",
        defaultValue = "8081",
        description = "REST API and web UI port (default ${DEFAULT-VALUE}).")
    int restPort;

    @Option(
        names = "--rpc-port",
        defaultValue = "6123",
        description = "JobManager RPC port (default ${DEFAULT-VALUE}).")
    int rpcPort;

    @Option(
        names = "--taskmanager-memory",
        defaultValue = "4g",
        description = "Process size of each TaskManager (default ${DEFAULT-VALUE}).")
    String taskManagerMemory;

    @Option(
        names = "--jobmanager-memory",
        defaultValue = "1g",
        description = "Process size of the JobManager (default ${DEFAULT-VALUE}).")
    String jobManagerMemory;

    @Option(
        names = "--prometheus-port",
        defaultValue = "9249",
        description =
            "First Prometheus port (default ${DEFAULT-VALUE}): the JobManager and each TaskManager take one.")
    int prometheusPort;

    @Option(
        names = "--prometheus-host",
        defaultValue = "127.0.0.1",
        description =
            "Address the Prometheus endpoints listen on (default ${DEFAULT-VALUE}; every other server is on loopback only).")
    String prometheusHost;

    @Option(
        names = "--supervise",
        negatable = true,
        defaultValue = "true",
        fallbackValue = "true",
        description =
            "Restart a JobManager or TaskManager that exits, with back-off (default; --no-supervise to leave them down).")
    boolean supervise;

    @Option(
        names = "--timeout",
        defaultValue = "180",
        description = "Seconds to wait for it (default ${DEFAULT-VALUE}).")
    int timeoutSeconds;

    @Override
    public Integer call() throws Exception {
      FlinkCluster.Status s =
          FlinkCluster.start(
              dir,
              new FlinkCluster.Options(
                  restPort,
                  rpcPort,
                  taskManagers,
                  slots,
                  taskManagerMemory,
                  jobManagerMemory,
                  prometheusPort,
                  prometheusHost,
                  supervise),
              Duration.ofSeconds(timeoutSeconds));
      System.out.printf(
          "flink cluster running: jobmanager pid %d, taskmanager pids %s, %d slots%n",
          s.jobManagerPid(), s.taskManagerPids(), s.overview().map(o -> o.slotsTotal()).orElse(0));
      if (s.supervisorPid() > 0) {
        System.out.printf(
            "supervisor pid %d restarts any of them that exits (log/supervisor.log)%n",
            s.supervisorPid());
      }
      System.out.printf(
          "web UI and REST API: %s%nprometheus: %s%nlogs: %s%n",
          s.restUrl(),
          s.prometheus().stream().map(Object::toString).collect(Collectors.joining(" ")),
          dir.toAbsolutePath().resolve("log"));
      return 0;
    }
  }

  @Command(
      name = "stop",
      description = "Stop the TaskManagers and the JobManager (SIGTERM; SIGKILL after 60 s).")
  static final class Stop extends DirOption implements Callable<Integer> {
    @Override
    public Integer call() throws Exception {
      FlinkCluster.Status s = FlinkCluster.status(dir);
      if (s.overview().isPresent()) {
        List<String> live;
        try (FlinkClusterClient client = new FlinkClusterClient(s.restUrl())) {
          live =
              client.jobs().stream()
                  .filter(j -> !List.of("FINISHED", "CANCELED", "FAILED").contains(j.state()))
                  .map(j -> j.id() + " (" + j.state() + ")")
                  .toList();
        }
        if (!live.isEmpty()) {
          System.out.println(
              "ending job(s) "
                  + String.join(", ", live)
                  + " without a savepoint (their retained"
                  + " checkpoints stay; `cancel JOB --savepoint` first to resume them cleanly)");
        }
      }
      System.out.println(
          FlinkCluster.stop(dir, Duration.ofSeconds(60))
              ? "flink cluster stopped"
              : "no flink cluster was running on " + dir);
      return 0;
    }
  }

  @Command(
      name = "status",
      description =
          "Print which processes run and what the JobManager reports, as JSON; exit 0 when ready, 3"
              + " otherwise.")
  static final class Status extends DirOption implements Callable<Integer> {
    @Override
    public Integer call() throws Exception {
      FlinkCluster.Status s = FlinkCluster.status(dir);
      Map<String, Object> figures = new LinkedHashMap<>();
      figures.put("running", s.running());
      figures.put("ready", s.ready());
      figures.put("rest_url", s.restUrl() == null ? null : s.restUrl().toString());
      figures.put("jobmanager_pid", s.jobManagerPid());
      figures.put("taskmanager_pids", s.taskManagerPids());
      figures.put("prometheus", s.prometheus().stream().map(Object::toString).toList());
      figures.put("supervisor_pid", s.supervisorPid());
      figures.put("restarts", s.restarts());
      s.overview()
          .ifPresent(
              o -> {
                figures.put("taskmanagers_registered", o.taskManagers());
                figures.put("slots_total", o.slotsTotal());
                figures.put("slots_available", o.slotsAvailable());
                figures.put("jobs_running", o.jobsRunning());
                figures.put("flink_version", o.flinkVersion());
              });
      System.out.println(new ObjectMapper().writeValueAsString(figures));
      return s.ready() ? 0 : 3;
    }
  }

  @Command(
      name = "job-jar",
      description = {
        "Write the job jar that submit sends, e.g. for a container image's usrlib/.",
        "It holds dynnibal's classes (entry class io.dynnibal.jobs.training.TrainingJobMain). Third-party jars (Flink,",
        "Kafka, DJL) belong on the cluster classpath."
      })
  static final class WriteJobJar implements Callable<Integer> {
    @Option(names = "--out", required = true, description = "Where to write it.")
    Path out;

    @Override
    public Integer call() throws Exception {
      JobJar.write(out, Map.of());
      System.out.println("job jar written: " + out.toAbsolutePath());
      return 0;
    }
  }
}
