package io.dynnibal.local;

import java.io.IOException;
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
import org.apache.kafka.common.utils.Time;

/**
 * A real single-node Kafka broker (KRaft: broker and controller in one process) running inside this
 * JVM, on free loopback ports, with its log under a directory the caller chooses. `dynnibal demo`
 * and the tests use it; the separate-JVM broker of deploy/ runs the same server class from the same
 * jars.
 *
 * <p>Internal topics (consumer offsets, transactions, share groups) have replication factor 1, or
 * the broker would wait forever for replicas and consumers would read nothing. The server's
 * properties and the listeners' security come from {@link BrokerProperties}.
 */
public final class EmbeddedKafkaBroker implements AutoCloseable {
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

  private final KafkaRaftServer server;
  private final String bootstrapServers;
  private final Path logDir;
  private final int brokerPort;
  private final int controllerPort;
  private final Map<String, String> overrides;
  private final Tls tls;
  private final Map<String, String> clientSecurity;

  private EmbeddedKafkaBroker(
      KafkaRaftServer server,
      Path logDir,
      int brokerPort,
      int controllerPort,
      Map<String, String> overrides,
      Tls tls) {
    this.server = server;
    this.bootstrapServers = "127.0.0.1:" + brokerPort;
    this.logDir = logDir;
    this.brokerPort = brokerPort;
    this.controllerPort = controllerPort;
    this.overrides = Map.copyOf(overrides);
    this.tls = tls;
    this.clientSecurity = BrokerProperties.clientSecurity(overrides, tls);
  }

  /**
   * The broker side of TLS on the client listener: its key store (its certificate and private key,
   * the certificate valid for 127.0.0.1) and a trust store of the client certificates it accepts.
   * The trust store must also hold the broker's own certificate: the broker's admin client ({@link
   * #clientProperties()}) presents the broker's key store and trusts the same store. PKCS12 both;
   * the key's password is the key store's (PKCS12 has one).
   */
  public record Tls(
      Path keystore, String keystorePassword, Path truststore, String truststorePassword) {
    @Override
    public String toString() {
      return "Tls[keystore=" + keystore + ", truststore=" + truststore + ", passwords redacted]";
    }
  }

  /**
   * A broker whose client listener requires SASL/PLAIN. {@code users} maps user names to passwords;
   * the broker's own connections use an internal admin user, which {@link #clientProperties()} also
   * uses.
   */
  public static EmbeddedKafkaBroker startWithSaslPlain(Path logDir, Map<String, String> users) {
    return start(logDir, BrokerProperties.saslUsers(users));
  }

  /**
   * A broker whose client listener is TLS only and requires a client certificate its trust store
   * holds ({@code ssl.client.auth=required}); clients need {@code security.protocol=SSL}, a trust
   * store with the broker's certificate and a key store. The controller listener stays plaintext on
   * loopback.
   */
  public static EmbeddedKafkaBroker startWithTls(Path logDir, Tls tls) {
    return start(logDir, Map.of(), tls);
  }

  /**
   * A broker whose client listener is SASL/PLAIN over TLS ({@code SASL_SSL}): clients authenticate
   * with a user and password of {@code users} and need a trust store with the broker's certificate,
   * no certificate of their own.
   */
  public static EmbeddedKafkaBroker startWithSaslSsl(
      Path logDir, Tls tls, Map<String, String> users) {
    return start(logDir, BrokerProperties.saslUsers(users), tls);
  }

  /** The JAAS line for a SASL/PLAIN client. */
  public static String plainJaas(String user, String password) {
    return BrokerProperties.plainJaas(user, password);
  }

  /**
   * Starts a broker on {@code logDir} and waits until it serves: a new directory is formatted as a
   * new cluster, one that was formatted before is reused as it is (a restart on the same data).
   */
  public static EmbeddedKafkaBroker start(Path logDir) {
    return start(logDir, Map.of());
  }

  /**
   * As {@link #start(Path)}, with broker properties that override the defaults (e.g. listeners for
   * SASL).
   */
  public static EmbeddedKafkaBroker start(Path logDir, Map<String, String> overrides) {
    return start(logDir, overrides, null);
  }

  private static EmbeddedKafkaBroker start(Path logDir, Map<String, String> overrides, Tls tls) {
    RuntimeException last = null;
    // The free ports are probed, then bound by the broker: another process may take one in between.
    // Retry then.
    for (int attempt = 0; attempt < 3; attempt++) {
      try {
        return startOn(logDir, overrides, tls, freePort(), freePort());
      } catch (IOException e) {
        throw new UncheckedIOException("cannot start the embedded Kafka broker under " + logDir, e);
      } catch (RuntimeException e) {
        last = e;
      }
    }
    throw last;
  }

  /**
   * A broker on fixed ports (a standalone broker a user starts and stops by port), formatting
   * {@code logDir} first if it is new.
   */
  public static EmbeddedKafkaBroker startOnPorts(Path logDir, int brokerPort, int controllerPort) {
    try {
      return startOn(logDir, Map.of(), null, brokerPort, controllerPort);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the Kafka broker under " + logDir, e);
    }
  }

  /**
   * Stops this broker and starts it again on the same ports and data, as a broker restart in
   * production would look to clients (a reliability test's fault). Use the returned broker from
   * then on.
   */
  public EmbeddedKafkaBroker restart(Duration down) throws IOException, InterruptedException {
    close();
    Thread.sleep(down.toMillis());
    return startOn(logDir, overrides, tls, brokerPort, controllerPort);
  }

  private static EmbeddedKafkaBroker startOn(
      Path logDir, Map<String, String> overrides, Tls tls, int brokerPort, int controllerPort)
      throws IOException {
    Files.createDirectories(logDir);
    Properties props = BrokerProperties.server(logDir, overrides, tls, brokerPort, controllerPort);
    KafkaConfig config = KafkaConfig.fromProps(props, false);
    BrokerProperties.format(logDir, config);
    KafkaRaftServer server = new KafkaRaftServer(config, Time.SYSTEM);
    try {
      server.startup();
    } catch (RuntimeException e) {
      server.shutdown(); // release threads, ports and the log directory lock before a retry
      server.awaitShutdown();
      throw e;
    }
    EmbeddedKafkaBroker broker =
        new EmbeddedKafkaBroker(server, logDir, brokerPort, controllerPort, overrides, tls);
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
    props.putAll(clientSecurity);
    props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    return props;
  }

  /** Creates topics and waits until they exist. */
  public void createTopics(Collection<NewTopic> topics) {
    try (Admin admin = Admin.create(clientProperties())) {
      admin.createTopics(topics).all().get(READY_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw new IllegalStateException(
          "cannot create topics " + topics + ": " + e.getCause(), e.getCause());
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
          throw new IllegalStateException(
              "interrupted while waiting for the embedded Kafka broker", e);
        } catch (Exception e) {
          last = e;
        }
      }
    }
    close();
    throw new IllegalStateException(
        "the embedded Kafka broker did not serve within " + READY_TIMEOUT, last);
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
