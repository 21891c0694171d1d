package io.dynnibal.cli.options;

import io.dynnibal.jobs.config.SecretReferences;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * How a command reaches a Kafka cluster: {@code --bootstrap} (required) and the client properties
 * of {@code --kafka-config} and {@code --kafka-property}. A property given with {@code
 * --kafka-property} overrides the file's; {@code --bootstrap} overrides both. A secret given
 * literally with {@code --kafka-property} is refused (every local user can read a process's
 * arguments): it belongs in the file, or behind a config provider reference.
 */
public final class KafkaConnection {
  @Option(
      names = "--bootstrap",
      required = true,
      description = "Kafka bootstrap servers, HOST:PORT[,HOST:PORT].")
  String bootstrap;

  @Option(
      names = "--kafka-property",
      description =
          "A Kafka client property, key=value (repeatable): security.protocol,"
              + " sasl.mechanism, ssl.truststore.location, ...; a secret only as a reference,"
              + " e.g. ssl.key.password=$${env:KEY_PASSWORD} (with config.providers=env and"
              + " its class), or in --kafka-config")
  List<String> kafkaProperties = new ArrayList<>();

  @Option(
      names = "--kafka-config",
      description = "Kafka client properties from a file (e.g. the SASL/SSL settings).")
  Path kafkaConfig;

  /** The bootstrap servers as given. */
  public String bootstrap() {
    return bootstrap;
  }

  /**
   * The client properties: the file's, then each {@code --kafka-property}, then {@code
   * bootstrap.servers}.
   *
   * @throws CommandLine.ParameterException when a {@code --kafka-property} is not key=value, or is
   *     a literal secret
   */
  public Properties clientProperties(CommandLine commandLine) throws IOException {
    Properties client = new Properties();
    if (kafkaConfig != null) {
      try (Reader reader = Files.newBufferedReader(kafkaConfig)) {
        client.load(reader);
      }
    }
    for (String kv : kafkaProperties) {
      int eq = kv.indexOf('=');
      if (eq <= 0) {
        throw new CommandLine.ParameterException(commandLine, "--kafka-property needs key=value");
      }
      try {
        SecretReferences.requireNotOnCommandLine(
            "--kafka-property",
            kv.substring(0, eq),
            kv.substring(eq + 1),
            false,
            "a --kafka-config file (readable by you only)");
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(commandLine, e.getMessage());
      }
      client.put(kv.substring(0, eq), kv.substring(eq + 1));
    }
    client.put("bootstrap.servers", bootstrap);
    return client;
  }
}
