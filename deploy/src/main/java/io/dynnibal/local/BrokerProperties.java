package io.dynnibal.local;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import kafka.server.KafkaConfig;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.metadata.storage.Formatter;

/**
 * The server properties of an {@link EmbeddedKafkaBroker}: one node that is broker and controller,
 * a client listener and a plaintext controller listener on loopback, and the client-side security
 * that reaches the client listener. The client listener's protocol is PLAINTEXT, SSL,
 * SASL_PLAINTEXT or SASL_SSL: SASL when the overrides carry {@link #SASL_USERS}, SSL when there is
 * a {@link EmbeddedKafkaBroker.Tls}.
 */
final class BrokerProperties {
  /** Marker override: a SASL/PLAIN client listener with these {@code user=password;} entries. */
  static final String SASL_USERS = "dynnibal.test.sasl.plain.users";

  /** The broker's own SASL user, {@code admin}, which its admin client also uses. */
  private static final String ADMIN_PASSWORD = "dynnibal-broker-admin";

  private BrokerProperties() {}

  /** {@code users} as the {@link #SASL_USERS} override's value. */
  static Map<String, String> saslUsers(Map<String, String> users) {
    StringBuilder encoded = new StringBuilder();
    users.forEach((u, pw) -> encoded.append(u).append('=').append(pw).append(';'));
    return Map.of(SASL_USERS, encoded.toString());
  }

  /** The JAAS line for a SASL/PLAIN client. */
  static String plainJaas(String user, String password) {
    return "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
        + user
        + "\" password=\""
        + password
        + "\";";
  }

  /**
   * The broker's properties: the defaults, then {@code overrides}, then the client listener's
   * security.
   */
  static Properties server(
      Path logDir,
      Map<String, String> overrides,
      EmbeddedKafkaBroker.Tls tls,
      int brokerPort,
      int controllerPort) {
    Properties props = defaults(logDir, brokerPort, controllerPort);
    props.putAll(overrides);
    applySecurity(props, overrides, tls, brokerPort, controllerPort);
    return props;
  }

  /** The client properties, less {@code bootstrap.servers}, that pass the client listener. */
  static Map<String, String> clientSecurity(
      Map<String, String> overrides, EmbeddedKafkaBroker.Tls tls) {
    Map<String, String> c = new TreeMap<>();
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

  /**
   * Formats {@code logDir} as a new single-node cluster unless it was formatted before (then a
   * start reuses its data).
   */
  static void format(Path logDir, KafkaConfig config) throws IOException {
    if (Files.exists(logDir.resolve("meta.properties"))) {
      return;
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

  private static String protocol(Map<String, String> overrides, EmbeddedKafkaBroker.Tls tls) {
    boolean sasl = overrides.containsKey(SASL_USERS);
    return (sasl ? "SASL_" : "") + (tls != null ? "SSL" : "PLAINTEXT");
  }

  private static void applySecurity(
      Properties p,
      Map<String, String> overrides,
      EmbeddedKafkaBroker.Tls tls,
      int brokerPort,
      int controllerPort) {
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
        "listener.name." + protocol.toLowerCase(Locale.ROOT) + ".plain.sasl.jaas.config",
        jaas.toString());
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
    // One node: internal topics with more replicas would never become available.
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
    // heap up front, in every JVM that embeds a broker; a smaller buffer only makes a large
    // compacted topic take more cleaning passes.
    p.put("log.cleaner.dedupe.buffer.size", String.valueOf(16 << 20));
    return p;
  }
}
