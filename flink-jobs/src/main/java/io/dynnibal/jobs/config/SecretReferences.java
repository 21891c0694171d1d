package io.dynnibal.jobs.config;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Kafka secrets by reference: a secret client property ({@link SettingsTable#isSecret}) is given as
 * one Kafka config provider reference, {@code ${provider:[path:]key}}, which every Kafka client
 * resolves itself when it is made (the job's on the TaskManagers and JobManager, the CLI's where it
 * runs). The reference travels in the job jar, the job graph and on command lines; the secret stays
 * in the file, directory or environment variable it names. A reference is not a secret: it is
 * printed as it is.
 *
 * <p>Invariant: nothing that leaves the process (a job jar, a job graph, a command line) holds a
 * secret property whose value is not a reference; {@link #literalSecrets} names those that would.
 */
public final class SecretReferences {
  /** One reference and nothing else, as Kafka's {@code ConfigTransformer} parses it. */
  private static final Pattern REFERENCE =
      Pattern.compile("\\$\\{([^}:]+):(?:([^}]*?):)?([^}]*?)\\}");

  /** What to tell a user who gave a literal secret. */
  public static final String HOW =
      "give a Kafka config provider reference instead, e.g."
          + " kafka.config.providers=file,"
          + " kafka.config.providers.file.class="
          + "org.apache.kafka.common.config.provider.FileConfigProvider and"
          + " ${file:/etc/dynnibal/kafka-secrets.properties:<key>} (or ${env:VAR} with"
          + " EnvVarConfigProvider, ${dir:DIR:FILE} with DirectoryConfigProvider;"
          + " docs/operations.md#security)";

  private SecretReferences() {}

  /** Whether a Kafka client property (without the {@code kafka.} prefix) holds a secret. */
  public static boolean isSecret(String property) {
    return SettingsTable.isSecret(property);
  }

  /** Whether {@code value} is exactly one config provider reference. */
  public static boolean isReference(String value) {
    return value != null && REFERENCE.matcher(value.trim()).matches();
  }

  /** Whether a client property's value is a secret given literally (not by reference). */
  public static boolean isLiteralSecret(String property, String value) {
    return isSecret(property) && !isReference(value);
  }

  /** The {@code kafka.*} keys of {@code config} whose secret is literal, in key order. */
  public static List<String> literalSecrets(TrainingJobConfig config) {
    return config.kafka.kafkaProperties.entrySet().stream()
        .filter(e -> isLiteralSecret(e.getKey(), e.getValue()))
        .map(e -> "kafka." + e.getKey())
        .toList();
  }

  /**
   * Throws when {@code config} holds a literal secret, which would travel in {@code where} (e.g.
   * "the job jar"), naming the keys and how to give them by reference.
   */
  public static void requireByReference(TrainingJobConfig config, String where) {
    List<String> literal = literalSecrets(config);
    if (!literal.isEmpty()) {
      throw new IllegalArgumentException(
          String.join(", ", literal)
              + (literal.size() == 1 ? " holds a secret" : " hold secrets")
              + " in plain text, which would travel in "
              + where
              + " (readable by whoever reads the cluster's blob store or the job's graph); "
              + HOW);
    }
  }

  /**
   * Refuses {@code key=value} given as a command-line argument ({@code flag}) when it is a literal
   * secret: every local user can read a process's arguments ({@code ps}, {@code
   * /proc/<pid>/cmdline}). {@code kafkaPrefix}: whether {@code key} carries the {@code kafka.}
   * prefix of a job setting (else it is a bare client property).
   */
  public static void requireNotOnCommandLine(
      String flag, String key, String value, boolean kafkaPrefix, String file) {
    String k = key.trim();
    if (kafkaPrefix) {
      if (!k.startsWith("kafka.")) {
        return;
      }
      k = k.substring("kafka.".length());
    }
    if (isLiteralSecret(k, value)) {
      throw new IllegalArgumentException(
          flag
              + " "
              + key.trim()
              + ": a secret on the command line is visible to every local user (ps,"
              + " /proc/<pid>/cmdline); put it in "
              + file
              + ", or "
              + (kafkaPrefix ? HOW : HOW.replace("kafka.config.providers", "config.providers")));
    }
  }

  /**
   * The problems of the references in {@code properties} (Kafka client properties): one naming a
   * provider that {@code config.providers} does not declare, or one declared without its class.
   * Kafka would leave such a reference unresolved and use its text as the password.
   */
  public static List<String> problems(Map<String, String> properties) {
    Set<String> declared =
        Arrays.stream(properties.getOrDefault("config.providers", "").split(","))
            .map(String::trim)
            .filter(s -> !s.isEmpty())
            .collect(Collectors.toSet());
    List<String> problems = new ArrayList<>();
    for (String provider : declared) {
      if (!properties.containsKey("config.providers." + provider + ".class")) {
        problems.add(
            "kafka.config.providers names "
                + provider
                + " but kafka.config.providers."
                + provider
                + ".class is not set");
      }
    }
    properties.forEach(
        (key, value) -> {
          Matcher m = REFERENCE.matcher(value);
          while (m.find()) {
            if (!declared.contains(m.group(1))) {
              problems.add(
                  "kafka."
                      + key
                      + " refers to config provider "
                      + m.group(1)
                      + ", which kafka.config.providers does not name (Kafka would use the"
                      + " reference's text as the value)");
            }
          }
        });
    return problems;
  }
}
