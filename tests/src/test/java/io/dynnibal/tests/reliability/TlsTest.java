package io.dynnibal.tests.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.cli.DynnibalCli;
import io.dynnibal.deploy.JobJar;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.jobs.training.TrainingJobMain;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.schemas.Target;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.schemas.TrainingPair;
import io.dynnibal.tests.harness.Cli;
import io.dynnibal.tests.harness.SecretsAtRest;
import io.dynnibal.tests.harness.StreamingClusterExtension;
import io.dynnibal.tests.harness.TlsMaterial;
import io.dynnibal.tests.harness.TrainingJobs;
import io.dynnibal.tests.training.SyntheticCorpus;
import io.dynnibal.trainer.FaultInjection;
import java.io.IOException;
import java.io.StringReader;
import java.io.Writer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.config.Configurator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * TLS passthrough: a broker whose only client listener is TLS with client certificates required
 * (and one with SASL/PLAIN over TLS). The job's sources and sinks, the publisher, the metrics
 * reader and the CLI's {@code publish} and {@code watch} get the stores from {@code kafka.*}
 * settings and the passwords by reference (a {@code ${file:...}} of Kafka's FileConfigProvider, or
 * a {@code --kafka-config} file), and work; clients without a trust store, without a certificate,
 * with a certificate the broker does not trust or with a wrong password are refused. A literal
 * password is refused by the job jar, the job graph and the command line. No password appears in
 * the job jar {@code submit} writes, the Java-serialised job graph, any process's command line
 * ({@code /proc/<pid>/cmdline}, read while keytool and the CLI run), the logs (also at DEBUG for
 * the Kafka clients' security code), the checkpoints, the metrics or the CLI's output.
 */
class TlsTest {
  @RegisterExtension
  static final StreamingClusterExtension CLUSTER = StreamingClusterExtension.withTaskManagers(1, 2);

  private static final SyntheticCorpus CORPUS = new SyntheticCorpus(60, 120, 8, 2, 31);

  private static final String SASL_PASSWORD =
      "alice-tls-" + Long.toHexString(new java.security.SecureRandom().nextLong());

  /** Raised to DEBUG while a test runs; log4j2-e2e.properties sends them to secrets-debug.log. */
  private static final List<String> DEBUG_LOGGERS =
      List.of(
          "org.apache.kafka.clients",
          "org.apache.kafka.common.security",
          "org.apache.kafka.common.config", // AbstractConfig prints every client's configuration
          "org.apache.kafka.common.network",
          "io.dynnibal");

  @Test
  @Timeout(300)
  void theJobTrainsOverMutualTlsWithSecretsByReferenceAndNoPasswordLeaks() throws Exception {
    List<TrainingMetrics> seen = new ArrayList<>();
    StringBuilder printed = new StringBuilder();
    Path runDir = Files.createDirectories(CLUSTER.workDir().resolve("tls-run"));
    TrainingJobConfig config;
    Map<String, Level> levels = debugLogging();
    try (SecretsAtRest.CommandLines commandLines = new SecretsAtRest.CommandLines()) {
      TlsMaterial tls = TlsMaterial.generate(CLUSTER.workDir().resolve("tls"));
      List<String> secrets = tls.passwords();
      try (EmbeddedKafkaBroker kafka =
          EmbeddedKafkaBroker.startWithTls(CLUSTER.workDir().resolve("tls-kafka"), tls.broker())) {
        config = TrainingJobs.smallConfig(kafka, runDir, "tls");
        config.apply("kafka.security.protocol", "SSL");
        Map<String, String> client =
            SecretsAtRest.byReference(runDir.resolve("kafka-secrets.properties"), tls.client());
        for (Map.Entry<String, String> e : client.entrySet()) {
          config.apply("kafka." + e.getKey(), e.getValue());
        }
        config.validate();
        String reference = client.get("ssl.keystore.password");
        assertTrue(reference.startsWith("${file:"), reference);
        // A reference is not a secret: printed as it is.
        assertEquals(reference, config.toProperties().get("kafka.ssl.keystore.password"));
        assertAbsent(secrets, "the printed config", config.toProperties().toString());
        // As submit creates them: an admin client of the CLI's that resolves the references.
        assertEquals(
            JobTopics.all(config, 2, (short) 1).size(),
            JobTopics.createMissing(config.clientProperties(), config, 2, (short) 1).size());

        assertRefused(kafka, Map.of("security.protocol", "SSL"), "a client without a trust store");
        assertRefused(kafka, ssl(tls.trustOnly()), "a client without a certificate");
        assertRefused(kafka, ssl(tls.stranger()), "a client whose certificate is not trusted");

        // A literal secret reaches neither a jar, nor a graph, nor the command line.
        TrainingJobConfig literal =
            config.copy().apply("kafka.ssl.keystore.password", tls.clientKeystorePassword);
        assertThrows(
            IllegalArgumentException.class,
            () -> JobJar.write(runDir.resolve("literal.jar"), literal.toPropertiesWithSecrets()));
        assertThrows(
            IllegalArgumentException.class, () -> SecretsAtRest.serialisedJobGraph(literal));
        String refused =
            Cli.run(
                1,
                "watch",
                "--set",
                "kafka.ssl.keystore.password=" + tls.clientKeystorePassword,
                "--until-step",
                "1");
        assertTrue(refused.contains("--config"), refused);
        printed.append(refused);

        // What submit uploads, and the graph the cluster receives, carry the reference only.
        Map<String, String> jar =
            SecretsAtRest.jarEntries(
                JobJar.write(runDir.resolve("job.jar"), config.toPropertiesWithSecrets()));
        Properties bundled = new Properties();
        bundled.load(new StringReader(jar.get(TrainingJobMain.SETTINGS_RESOURCE)));
        assertEquals(reference, bundled.getProperty("kafka.ssl.keystore.password"));
        jar.forEach((name, content) -> assertAbsent(secrets, "job jar entry " + name, content));
        String graph = SecretsAtRest.serialisedJobGraph(config);
        assertTrue(graph.contains(reference), "the serialised graph holds no client properties");
        assertAbsent(secrets, "the serialised job graph", graph);

        Properties kafkaClient = config.clientProperties();
        try (CorpusPublisher publisher = new CorpusPublisher(kafkaClient);
            TopicReader<TrainingMetrics> metrics =
                new TopicReader<>(kafkaClient, config.metricsTopic(), TrainingMetrics.class)) {
          publisher.publishTargets(config.targetsTopic(), CORPUS.targets, null);
          JobClient job =
              TrainingJobs.start(
                  config,
                  FaultInjection.NONE,
                  conf ->
                      conf.set( // keep the checkpoints after the cancel below, to look into them
                          ConfigOptions.key(
                                  "execution.checkpointing.externalized-checkpoint-retention")
                              .stringType()
                              .noDefaultValue(),
                          "RETAIN_ON_CANCELLATION"));
          try {
            TrainingJobs.awaitTargetsIndexed(kafkaClient, config, job);
            publisher.publishPairs(config.pairsTopic(), CORPUS.train, "e0", 0, null);
            long steps = CORPUS.train.size() / config.training.batchSize;
            TrainingMetrics last = TrainingJobs.awaitStep(metrics, seen, job, steps);
            assertEquals(steps * config.training.batchSize, last.getPairsTrained());
            List<String> trained = TrainingJobs.trainedPairIds(seen);
            assertEquals(
                steps * config.training.batchSize, trained.size(), "pair ids of the steps");
            assertEquals(trained.size(), new HashSet<>(trained).size(), "a pair trained twice");
            assertTrue(
                TrainingJobs.publishedPairIds(CORPUS.train, "e0").containsAll(trained),
                "trained pairs that were never published: " + trained);
            printed.append(watchInAProcessOfItsOwn(config, runDir, steps, commandLines));
          } finally {
            job.cancel().get();
          }
        }
      }
      // keytool made the stores, the CLI's watch ran as a process: none had a password in its
      // arguments.
      for (String commandLine : commandLines.seen()) {
        assertAbsent(secrets, "a command line (" + commandLine.split(" ")[0] + ")", commandLine);
      }
      commandLines.assertSaw("keytool", "-storepass:env");
      commandLines.assertSaw(DynnibalCli.class.getName(), "watch", "--config");

      assertAbsent(secrets, "the metrics records", seen.toString());
      assertAbsent(secrets, "the CLI's output", printed.toString());
      Path checkpoints = Path.of(URI.create(config.job.checkpointDir));
      List<Path> files = filesUnder(checkpoints);
      assertTrue(
          files.stream().anyMatch(f -> f.getFileName().toString().equals("_metadata")),
          "no checkpoint _metadata under " + checkpoints + ": " + files);
      files.addAll(filesUnder(Path.of(config.job.snapshotDir)));
      for (Path f : files) {
        assertAbsent(secrets, f.toString(), Files.readString(f, StandardCharsets.ISO_8859_1));
      }
      assertLogsClean(secrets);
    } finally {
      Configurator.setLevel(levels);
    }
  }

  /**
   * Runs the CLI's {@code watch} in a JVM of its own with the job's {@code kafka.*} settings in a
   * {@code --config} file (references, resolved by the watch's Kafka client), while {@code
   * commandLines} reads its arguments; returns what it printed.
   */
  private static String watchInAProcessOfItsOwn(
      TrainingJobConfig config, Path dir, long steps, SecretsAtRest.CommandLines commandLines)
      throws Exception {
    Properties settings = new Properties();
    config.toPropertiesWithSecrets().entrySet().stream()
        .filter(
            e ->
                e.getKey().startsWith("kafka.")
                    || e.getKey().equals("bootstrap.servers")
                    || e.getKey().equals("topic.prefix"))
        .forEach(e -> settings.setProperty(e.getKey(), e.getValue()));
    Path file = dir.resolve("watch.properties");
    try (Writer w = Files.newBufferedWriter(file, StandardCharsets.ISO_8859_1)) {
      settings.store(w, null);
    }
    Path out = dir.resolve("watch.out");
    String java = ProcessHandle.current().info().command().orElseThrow();
    Process watch =
        new ProcessBuilder(
                java,
                "-cp",
                System.getProperty("java.class.path"),
                DynnibalCli.class.getName(),
                "watch",
                "--config",
                file.toString(),
                "--until-step",
                String.valueOf(steps),
                "--idle-exit",
                "30")
            .redirectErrorStream(true)
            .redirectOutput(out.toFile())
            .start();
    try {
      assertTrue(watch.waitFor(120, TimeUnit.SECONDS), "watch did not end");
    } finally {
      watch.destroyForcibly();
    }
    String printed = Files.readString(out, StandardCharsets.UTF_8);
    assertEquals(0, watch.exitValue(), "watch printed:\n" + printed);
    return printed;
  }

  @Test
  @Timeout(120)
  void saslOverTlsPublishesAndReadsAndRefusesAWrongPassword() throws Exception {
    TlsMaterial tls = TlsMaterial.generate(CLUSTER.workDir().resolve("sasl-tls"));
    Path dir = CLUSTER.workDir().resolve("sasl-tls-data");
    Files.createDirectories(dir);
    Path targets = dir.resolve("targets.jsonl");
    Files.writeString(
        targets,
        """
        {"target_id": "zsh", "target_text": "zsh\\nshell with lots of features"}
        {"target_id": "bash", "target_text": "bash\\nGNU Bourne Again SHell"}
        {"target_id": "fish", "target_text": "fish\\nfriendly interactive shell"}
        """);
    Path pairs = dir.resolve("pairs.jsonl");
    Files.writeString(
        pairs,
        """
        {"query_id": "q:zsh", "query_text": "shell with lots of features", "target_id": "zsh"}
        {"query_id": "q:bash", "query_text": "GNU Bourne Again SHell", "target_id": "bash"}
        """);
    String printed;
    Map<String, Level> levels = debugLogging();
    try (EmbeddedKafkaBroker kafka =
        EmbeddedKafkaBroker.startWithSaslSsl(
            CLUSTER.workDir().resolve("sasl-tls-kafka"),
            tls.broker(),
            Map.of("alice", SASL_PASSWORD))) {
      Map<String, String> alice = saslSsl(tls.trustOnly(), SASL_PASSWORD);
      Map<String, String> wrong = saslSsl(tls.trustOnly(), "not-" + SASL_PASSWORD);
      Map<String, String> noTrust = saslSsl(Map.of(), SASL_PASSWORD);
      assertRefused(kafka, wrong, "a client with a wrong password");
      assertRefused(kafka, noTrust, "a client without a trust store");

      List<String> publish =
          new ArrayList<>(
              List.of(
                  "publish",
                  "--bootstrap",
                  kafka.bootstrapServers(),
                  "--targets",
                  targets.toString(),
                  "--pairs",
                  pairs.toString(),
                  "--create-topics",
                  "--topic-prefix",
                  "st."));
      // On the command line a secret is refused; in a --kafka-config file (owner-only) it is not.
      List<String> onArgv = new ArrayList<>(publish);
      alice.forEach((k, v) -> onArgv.addAll(List.of("--kafka-property", k + "=" + v)));
      String refused = Cli.run(2, onArgv.toArray(String[]::new));
      assertTrue(refused.contains("--kafka-config"), refused);
      Path connection = dir.resolve("alice.properties");
      Files.createFile(
          connection,
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      Properties file = new Properties();
      file.putAll(alice);
      try (Writer w = Files.newBufferedWriter(connection, StandardCharsets.ISO_8859_1)) {
        file.store(w, null);
      }
      publish.addAll(List.of("--kafka-config", connection.toString()));
      printed = refused + Cli.run(0, publish.toArray(String[]::new));
      assertTrue(
          printed.contains("\"targets_published\": 3")
              && printed.contains("\"pairs_published\": 2"),
          printed);

      Properties client = new Properties();
      client.putAll(alice);
      client.put("bootstrap.servers", kafka.bootstrapServers());
      assertEquals(
          List.of("bash", "fish", "zsh"),
          read(client, "st.targets", Target.class, 3).stream()
              .map(Target::getTargetId)
              .sorted()
              .toList());
      assertEquals(
          List.of("q:bash#0", "q:zsh#0"),
          read(client, "st.pairs", TrainingPair.class, 2).stream()
              .map(TrainingPair::getPairId)
              .sorted()
              .toList());
    } finally {
      Configurator.setLevel(levels);
    }
    List<String> secrets = new ArrayList<>(tls.passwords());
    secrets.add(SASL_PASSWORD);
    assertAbsent(secrets, "the CLI's output", printed);
    assertLogsClean(secrets);
  }

  private static Map<String, String> ssl(Map<String, String> stores) {
    Map<String, String> p = new LinkedHashMap<>(stores);
    p.put("security.protocol", "SSL");
    return p;
  }

  private static Map<String, String> saslSsl(Map<String, String> stores, String password) {
    Map<String, String> p = new LinkedHashMap<>(stores);
    p.put("security.protocol", "SASL_SSL");
    p.put("sasl.mechanism", "PLAIN");
    p.put("sasl.jaas.config", EmbeddedKafkaBroker.plainJaas("alice", password));
    return p;
  }

  private static void assertRefused(
      EmbeddedKafkaBroker kafka, Map<String, String> security, String who) {
    Properties p = new Properties();
    p.putAll(security);
    p.put("bootstrap.servers", kafka.bootstrapServers());
    try (Admin admin = Admin.create(p)) {
      Exception e =
          assertThrows(
              Exception.class,
              () ->
                  admin.describeCluster(new DescribeClusterOptions().timeoutMs(5000)).nodes().get(),
              who + " got in");
      // Refused by the TLS handshake or the SASL exchange, not merely slow.
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      String type = cause.getClass().getSimpleName();
      assertTrue(
          type.equals("SslAuthenticationException") || type.equals("SaslAuthenticationException"),
          who + ": expected an authentication failure, got " + cause);
    }
  }

  private static <T extends org.apache.avro.specific.SpecificRecordBase> List<T> read(
      Properties client, String topic, Class<T> type, int expected) {
    List<T> records = new ArrayList<>();
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    try (TopicReader<T> reader = new TopicReader<>(client, topic, type)) {
      while (records.size() < expected && System.nanoTime() < deadline) {
        records.addAll(reader.poll(Duration.ofMillis(200)));
      }
    }
    return records;
  }

  /** DEBUG for the Kafka clients' security and network code and ours; returns the old levels. */
  private static Map<String, Level> debugLogging() {
    Map<String, Level> before = new LinkedHashMap<>();
    Map<String, Level> debug = new LinkedHashMap<>();
    for (String name : DEBUG_LOGGERS) {
      before.put(name, LogManager.getLogger(name).getLevel());
      debug.put(name, Level.DEBUG);
    }
    Configurator.setLevel(debug);
    return before;
  }

  private static void assertLogsClean(List<String> secrets) throws IOException {
    Path log = Path.of(System.getProperty("dynnibal.test.log", "target/e2e.log"));
    assertTrue(Files.exists(log), "no e2e log at " + log.toAbsolutePath() + " to check");
    assertAbsent(secrets, log.toString(), Files.readString(log, StandardCharsets.ISO_8859_1));
    Path debug =
        Path.of(System.getProperty("dynnibal.test.secretsLog", "target/secrets-debug.log"));
    assertTrue(Files.exists(debug), "no DEBUG log at " + debug.toAbsolutePath() + " to check");
    String text = Files.readString(debug, StandardCharsets.ISO_8859_1);
    // The debug log saw the clients' configuration (Kafka hides passwords in it) and TLS at work.
    assertTrue(
        text.contains("ssl.truststore.password = [hidden]"),
        "the DEBUG log has no client configuration dump: " + debug.toAbsolutePath());
    assertAbsent(secrets, debug.toString(), text);
  }

  private static void assertAbsent(List<String> secrets, String where, String content) {
    SecretsAtRest.assertAbsent(secrets, where, content);
  }

  private static List<Path> filesUnder(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return new ArrayList<>();
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      return new ArrayList<>(walk.filter(Files::isRegularFile).toList());
    }
  }
}
