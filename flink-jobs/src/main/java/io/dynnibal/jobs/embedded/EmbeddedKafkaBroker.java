package io.dynnibal.jobs.embedded;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;

/**
 * A real single-node Kafka broker (KRaft: broker and controller in one process) running inside this JVM, on free
 * loopback ports, with its log under a directory the caller chooses. `dynnibal demo` and the tests use it; the
 * separate-JVM broker of deploy/ runs the same server class from the same jars.
 *
 * <p>Internal topics (consumer offsets, transactions, share groups) have replication factor 1, or the broker
 * would wait forever for replicas and consumers would read nothing.
 */
public final class EmbeddedKafkaBroker implements AutoCloseable {
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

  private final KafkaRaftServer server;
  private final String bootstrapServers;
  private final Path logDir;
  private final int brokerPort;
  private final int controllerPort;
  private final Map<String, String> overrides;

  private EmbeddedKafkaBroker(
      KafkaRaftServer server, Path logDir, int brokerPort, int controllerPort, Map<String, String> overrides) {
    this.server = server;
    this.bootstrapServers = "127.0.0.1:" + brokerPort;
    this.logDir = logDir;
    this.brokerPort = brokerPort;
    this.controllerPort = controllerPort;
    this.overrides = Map.copyOf(overrides);
  }

  /**
   * Starts a broker on {@code logDir} and waits until it serves: a new directory is formatted as a new cluster, one
   * that was formatted before is reused as it is (a restart on the same data).
   */
  public static EmbeddedKafkaBroker start(Path logDir) {
    return start(logDir, Map.of());
  }

  /** As {@link #start(Path)}, with broker properties that override the defaults (e.g. listeners for SASL). */
  public static EmbeddedKafkaBroker start(Path logDir, Map<String, String> overrides) {
    RuntimeException last = null;
    // The free ports are probed, then bound by the broker: another process may take one in between. Retry then.
    for (int attempt = 0; attempt < 3; attempt++) {
      try {
        return startOnce(logDir, overrides);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot start the embedded Kafka broker under " + logDir, e);
      } catch (RuntimeException e) {
        last = e;
      }
    }
    throw last;
  }

  private static EmbeddedKafkaBroker startOnce(Path logDir, Map<String, String> overrides) throws IOException {
    return startOn(logDir, overrides, freePort(), freePort());
  }

  /**
   * Stops this broker and starts it again on the same ports and data, as a broker restart in production would look
   * to clients (a reliability test's fault). Use the returned broker from then on.
   */
  public EmbeddedKafkaBroker restart(Duration down) throws IOException, InterruptedException {
    close();
    Thread.sleep(down.toMillis());
    return startOn(logDir, overrides, brokerPort, controllerPort);
  }

  private static EmbeddedKafkaBroker startOn(Path logDir, Map<String, String> overrides, int brokerPort,
      int controllerPort) throws IOException {
    Files.createDirectories(logDir);
    Properties props = defaults(logDir, brokerPort, controllerPort);
    props.putAll(overrides);
    KafkaConfig config = KafkaConfig.fromProps(props, false);
    format(logDir, config);
    KafkaRaftServer server = new KafkaRaftServer(config, Time.SYSTEM);
    try {
      server.startup();
    } catch (RuntimeException e) {
      server.shutdown(); // release threads, ports and the log directory lock before a retry
      server.awaitShutdown();
      throw e;
    }
    EmbeddedKafkaBroker broker = new EmbeddedKafkaBroker(server, logDir, brokerPort, controllerPort, overrides);
    broker.awaitReady();
    return broker;
  }

  /** {@code host:port} for {@code bootstrap.servers}. */
  public String bootstrapServers() {
    return bootstrapServers;
  }

  public Path logDir() {
    return logDir;
  }

  /** Client properties that reach this broker; add your own on top. */
  public Properties clientProperties() {
    Properties props = new Properties();
    props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    return props;
  }

  /** Creates topics and waits until they exist. */
  public void createTopics(Collection<NewTopic> topics) {
    try (Admin admin = Admin.create(clientProperties())) {
      admin.createTopics(topics).all().get(READY_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw new IllegalStateException("cannot create topics " + topics + ": " + e.getCause(), e.getCause());
    } catch (Exception e) {
      throw new IllegalStateException("cannot create topics " + topics, e);
    }
  }

  /** Creates one topic with the given partition count, replication factor 1. */
  public void createTopic(String name, int partitions) {
    createTopics(List.of(new NewTopic(name, partitions, (short) 1)));
  }

  @Override
  public void close() {
    server.shutdown();
    server.awaitShutdown();
  }

  private void awaitReady() {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    Exception last = null;
    try (Admin admin = Admin.create(clientProperties())) {
      while (System.nanoTime() < deadline) {
        try {
          if (!admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty()) {
            return;
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while waiting for the embedded Kafka broker", e);
        } catch (Exception e) {
          last = e;
        }
      }
    }
    close();
    throw new IllegalStateException("the embedded Kafka broker did not serve within " + READY_TIMEOUT, last);
  }

  private static Properties defaults(Path logDir, int brokerPort, int controllerPort) {
    Properties p = new Properties();
    p.put("process.roles", "broker,controller");
    p.put("node.id", "1");
    p.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
    p.put("listeners", "PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
    p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
    p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    p.put("inter.broker.listener.name", "PLAINTEXT");
    p.put("controller.listener.names", "CONTROLLER");
    p.put("log.dirs", logDir.toAbsolutePath().toString());
    p.put("num.partitions", "1");
    p.put("auto.create.topics.enable", "false");
    p.put("offsets.topic.replication.factor", "1");
    p.put("offsets.topic.num.partitions", "4");
    p.put("transaction.state.log.replication.factor", "1");
    p.put("transaction.state.log.min.isr", "1");
    p.put("transaction.state.log.num.partitions", "4");
    p.put("share.coordinator.state.topic.replication.factor", "1");
    p.put("share.coordinator.state.topic.min.isr", "1");
    // Flink's exactly-once sink opens transactions of up to an hour by default; the broker's cap must allow it.
    p.put("transaction.max.timeout.ms", String.valueOf(TimeUnit.HOURS.toMillis(1)));
    p.put("group.initial.rebalance.delay.ms", "0");
    return p;
  }

  private static void format(Path logDir, KafkaConfig config) throws IOException {
    if (Files.exists(logDir.resolve("meta.properties"))) {
      return; // formatted before: restart on the same data
    }
    try {
      new Formatter()
          .setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
          .setNodeId(config.nodeId())
          .setClusterId(Uuid.randomUuid().toString())
          .setControllerListenerName("CONTROLLER")
          .setMetadataLogDirectory(config.metadataLogDir())
          .addDirectory(logDir.toAbsolutePath().toString())
          .run();
    } catch (Exception e) {
      throw new IOException("cannot format Kafka storage in " + logDir + ": " + e.getMessage(), e);
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
