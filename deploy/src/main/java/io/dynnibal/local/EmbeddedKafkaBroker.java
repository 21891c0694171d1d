package io.dynnibal.local;

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
 * A real single-node Kafka broker (KRaft: broker and controller in one process) running inside this
 * JVM, on free loopback ports, with its log under a directory the caller chooses. `dynnibal demo`
 * and the tests use it; the separate-JVM broker of deploy/ runs the same server class from the same
 * jars.
 *
 * <p>Internal topics (consumer offsets, transactions, share groups) have replication factor 1, or
 * the broker would wait forever for replicas and consumers would read nothing.
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
    this.clientSecurity = clientSecurity(overrides, tls);
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
   * Marker override: start with a SASL/PLAIN listener instead of PLAINTEXT (see {@link
   * #startWithSaslPlain}).
   */
  private static final String SASL_USERS = "dynnibal.test.sasl.plain.users";

  private static final String ADMIN_PASSWORD = "dynnibal-broker-admin";

  /**
   * A broker whose client listener requires SASL/PLAIN. {@code users} maps user names to passwords;
   * the broker's own connections use an internal admin user, which {@link #clientProperties()} also
   * uses.
   */
  public static EmbeddedKafkaBroker startWithSaslPlain(Path logDir, Map<String, String> users) {
    StringBuilder encoded = new StringBuilder();
    users.forEach((u, pw) -> encoded.append(u).append('=').append(pw).append(';'));
    return start(logDir, Map.of(SASL_USERS, encoded.toString()));
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
    StringBuilder encoded = new StringBuilder();
    users.forEach((u, pw) -> encoded.append(u).append('=').append(pw).append(';'));
    return start(logDir, Map.of(SASL_USERS, encoded.toString()), tls);
  }

  /** The JAAS line for a SASL/PLAIN client. */
  public static String plainJaas(String user, String password) {
    return "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
        + user
        + "\" password=\""
        + password
        + "\";";
  }

  /** PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL: the client listener's protocol. */
  private static String protocol(Map<String, String> overrides, Tls tls) {
    boolean sasl = overrides.containsKey(SASL_USERS);
    return (sasl ? "SASL_" : "") + (tls != null ? "SSL" : "PLAINTEXT");
  }

  private static Map<String, String> clientSecurity(Map<String, String> overrides, Tls tls) {
    Map<String, String> c = new java.util.TreeMap<>();
    String protocol = protocol(overrides, tls);
    if (protocol.equals("PLAINTEXT")) {
      return c;
    }
    c.put("security.protocol", protocol);
    if (overrides.containsKey(SASL_USERS)) {
      c.put("sasl.mechanism", "PLAIN");
      c.put("sasl.jaas.config", plainJaas("admin", ADMIN_PASSWORD));
    }
    if (tls != null) {
      c.put("ssl.truststore.location", tls.truststore().toString());
      c.put("ssl.truststore.password", tls.truststorePassword());
      c.put("ssl.truststore.type", "PKCS12");
      if (!overrides.containsKey(SASL_USERS)) {
        c.put("ssl.keystore.location", tls.keystore().toString());
        c.put("ssl.keystore.password", tls.keystorePassword());
        c.put("ssl.keystore.type", "PKCS12");
        c.put("ssl.key.password", tls.keystorePassword());
      }
    }
    return c;
  }

  private static void applySecurity(
      Properties p, Map<String, String> overrides, Tls tls, int brokerPort, int controllerPort) {
    String protocol = protocol(overrides, tls);
    p.remove(SASL_USERS);
    if (protocol.equals("PLAINTEXT")) {
      return;
    }
    p.put(
        "listeners",
        protocol + "://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
    p.put("advertised.listeners", protocol + "://127.0.0.1:" + brokerPort);
    p.put("listener.security.protocol.map", protocol + ":" + protocol + ",CONTROLLER:PLAINTEXT");
    p.put("inter.broker.listener.name", protocol);
    if (tls != null) {
      p.put("ssl.keystore.location", tls.keystore().toAbsolutePath().toString());
      p.put("ssl.keystore.password", tls.keystorePassword());
      p.put("ssl.keystore.type", "PKCS12");
      p.put("ssl.key.password", tls.keystorePassword());
      p.put("ssl.truststore.location", tls.truststore().toAbsolutePath().toString());
      p.put("ssl.truststore.password", tls.truststorePassword());
      p.put("ssl.truststore.type", "PKCS12");
      // TLS alone: the certificate is the client's identity. Over SASL the password is.
      p.put("ssl.client.auth", overrides.containsKey(SASL_USERS) ? "none" : "required");
    }
    String users = overrides.get(SASL_USERS);
    if (users == null) {
      return;
    }
    StringBuilder jaas =
        new StringBuilder(
            "org.apache.kafka.common.security.plain.PlainLoginModule required"
                + " username=\"admin\" password=\""
                + ADMIN_PASSWORD
                + "\" user_admin=\""
                + ADMIN_PASSWORD
                + "\"");
    for (String entry : users.split(";")) {
      if (!entry.isEmpty()) {
        int eq = entry.indexOf('=');
        jaas.append(" user_")
            .append(entry, 0, eq)
            .append("=\"")
            .append(entry.substring(eq + 1))
            .append('"');
      }
    }
    jaas.append(';');
    p.put("sasl.enabled.mechanisms", "PLAIN");
    p.put("sasl.mechanism.inter.broker.protocol", "PLAIN");
    p.put(
        "listener.name." + protocol.toLowerCase(java.util.Locale.ROOT) + ".plain.sasl.jaas.config",
        jaas.toString());
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
    Properties props = defaults(logDir, brokerPort, controllerPort);
    props.putAll(overrides);
    applySecurity(props, overrides, tls, brokerPort, controllerPort);
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

  private static Properties defaults(Path logDir, int brokerPort, int controllerPort) {
    Properties p = new Properties();
    p.put("process.roles", "broker,controller");
    p.put("node.id", "1");
    p.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
    p.put(
        "listeners",
        "PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
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
    // Flink's exactly-once sink opens transactions of up to an hour by default; the broker's cap
    // must allow it.
    p.put("transaction.max.timeout.ms", String.valueOf(TimeUnit.HOURS.toMillis(1)));
    p.put("group.initial.rebalance.delay.ms", "0");
    // The log cleaner (the targets topic is compacted) allocates its whole dedupe buffer on the
    // heap up front, 128 MB by default, in the JVM of every demo, benchmark and test. 16 MB maps
    // ~700,000 keys a pass; a larger topic is cleaned in more passes.
    p.put("log.cleaner.dedupe.buffer.size", String.valueOf(16 << 20));
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
