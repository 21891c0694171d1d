package io.dynnibal.deploy;

import io.dynnibal.deploy.metrics.BoundPrometheusReporterFactory;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.configuration.RestOptions;

/**
 * A cluster directory's {@code conf/}: the {@code config.yaml} and {@code log4j.properties} every
 * process of the cluster reads, written on every start, and what they say about where the cluster
 * serves. Every address is on 127.0.0.1 but the Prometheus reporters', which is the user's to
 * choose.
 */
final class ClusterConfiguration {
  private static final ConfigOption<String> PROMETHEUS_PORT =
      ConfigOptions.key("metrics.reporter.prom.port").stringType().noDefaultValue();
  private static final ConfigOption<String> PROMETHEUS_HOST =
      ConfigOptions.key("metrics.reporter.prom." + BoundPrometheusReporterFactory.HOST)
          .stringType()
          .defaultValue(BoundPrometheusReporterFactory.DEFAULT_HOST);

  private ClusterConfiguration() {}

  /**
   * Writes {@code conf/} (and creates {@code log/} and {@code tmp/}) for a cluster on {@code dir}
   * started with {@code options}.
   *
   * @return the {@code conf/} directory, what {@link GlobalConfiguration#loadConfiguration} reads
   */
  static Path write(Path dir, FlinkCluster.Options options) throws IOException {
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
            // Every process serves its metrics (the job's under `dynnibal_`) to Prometheus, on
            // one address (Flink's own reporter takes every interface).
            "metrics.reporter.prom.factory.class: "
                + BoundPrometheusReporterFactory.class.getName(),
            "metrics.reporter.prom."
                + BoundPrometheusReporterFactory.HOST
                + ": "
                + options.prometheusHost(),
            "metrics.reporter.prom.port: " + options.prometheusPorts(),
            "");
    Files.writeString(conf.resolve("config.yaml"), yaml);
    ClusterLayout.writeTaskManagerCount(dir, options.taskManagers());
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

  /** The REST API's address in {@code configuration}. */
  static URI restUrl(Configuration configuration) {
    return URI.create("http://127.0.0.1:" + configuration.get(RestOptions.PORT) + "/");
  }

  /** The REST API's address that {@code dir}'s {@code conf/} names, or null before a start. */
  static URI restUrl(Path dir) {
    Path conf = dir.resolve("conf");
    return Files.exists(conf.resolve("config.yaml"))
        ? restUrl(GlobalConfiguration.loadConfiguration(conf.toString()))
        : null;
  }

  /** The Prometheus endpoints of the range {@code dir}'s {@code conf/} names that answer. */
  static List<URI> answeringPrometheus(Path dir) {
    Path conf = dir.resolve("conf");
    if (!Files.exists(conf.resolve("config.yaml"))) {
      return List.of();
    }
    Configuration configuration = GlobalConfiguration.loadConfiguration(conf.toString());
    String range = configuration.getOptional(PROMETHEUS_PORT).orElse("").trim();
    String host = configuration.get(PROMETHEUS_HOST);
    if (host.contains(":")) {
      host = "[" + host + "]";
    }
    if (!range.matches("\\d+-\\d+")) {
      return List.of();
    }
    String[] bounds = range.split("-");
    List<URI> answering = new ArrayList<>();
    for (int port = Integer.parseInt(bounds[0]); port <= Integer.parseInt(bounds[1]); port++) {
      URI uri = URI.create("http://" + host + ":" + port + "/metrics");
      try {
        HttpURLConnection c = (HttpURLConnection) uri.toURL().openConnection();
        c.setConnectTimeout(300);
        // A TaskManager that shares its cores with training can be slow to answer.
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
}
