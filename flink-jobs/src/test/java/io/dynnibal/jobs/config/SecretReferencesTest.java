package io.dynnibal.jobs.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Secrets by reference: which values are references, which secrets are literal, how references are
 * printed and checked, and that Kafka's own client configuration resolves them.
 */
class SecretReferencesTest {
  private static final String FILE_PROVIDER =
      "org.apache.kafka.common.config.provider.FileConfigProvider";

  @Test
  void aReferenceIsOneProviderReferenceAndNothingElse() {
    assertTrue(SecretReferences.isReference("${file:/etc/k.properties:ssl.key.password}"));
    assertTrue(SecretReferences.isReference(" ${env:KAFKA_PASSWORD} "));
    assertTrue(SecretReferences.isReference("${dir:/var/run/secrets/kafka:sasl.jaas.config}"));
    assertFalse(SecretReferences.isReference("hunter2"));
    assertFalse(SecretReferences.isReference("${file:/a:b}hunter2"));
    assertFalse(SecretReferences.isReference("prefix ${file:/a:b}"));
    assertFalse(SecretReferences.isReference("${nocolon}"));
    assertFalse(SecretReferences.isReference(null));
  }

  @Test
  void literalSecretsAreNamedAndRefused() {
    TrainingJobConfig c =
        new TrainingJobConfig()
            .apply("kafka.ssl.truststore.password", "literal-pw")
            .apply("kafka.ssl.keystore.password", "${file:/etc/k.properties:ks}")
            .apply("kafka.security.protocol", "SSL");
    assertEquals(List.of("kafka.ssl.truststore.password"), SecretReferences.literalSecrets(c));
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> SecretReferences.requireByReference(c, "the job jar"));
    assertTrue(e.getMessage().contains("kafka.ssl.truststore.password"), e.getMessage());
    assertTrue(e.getMessage().contains("the job jar"), e.getMessage());
    assertTrue(e.getMessage().contains("${file:"), e.getMessage());
    assertFalse(e.getMessage().contains("literal-pw"), e.getMessage());
    c.apply("kafka.ssl.truststore.password", "${env:TRUST_PW}");
    SecretReferences.requireByReference(c, "the job jar");
  }

  @Test
  void referencesArePrintedAsTheyAre() {
    TrainingJobConfig c =
        new TrainingJobConfig()
            .apply("kafka.config.providers", "file")
            .apply("kafka.config.providers.file.class", FILE_PROVIDER)
            .apply("kafka.sasl.jaas.config", "${file:/etc/k.properties:sasl.jaas.config}")
            .apply("kafka.ssl.key.password", "literal-pw");
    assertEquals(
        "${file:/etc/k.properties:sasl.jaas.config}",
        c.toProperties().get("kafka.sasl.jaas.config"));
    assertEquals("[redacted]", c.toProperties().get("kafka.ssl.key.password"));
  }

  @Test
  void aLiteralSecretOnTheCommandLineIsRefused() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                SecretReferences.requireNotOnCommandLine(
                    "--set", "kafka.sasl.jaas.config", "x password=\"p\";", true, "--config FILE"));
    assertTrue(e.getMessage().contains("--config FILE"), e.getMessage());
    assertTrue(e.getMessage().contains("${env:"), e.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () ->
            SecretReferences.requireNotOnCommandLine(
                "--kafka-property", "ssl.key.password", "p", false, "--kafka-config FILE"));
    // References and settings that are not secrets pass.
    SecretReferences.requireNotOnCommandLine(
        "--set", "kafka.ssl.key.password", "${env:KEY_PW}", true, "--config FILE");
    SecretReferences.requireNotOnCommandLine("--set", "batch.size", "10", true, "--config FILE");
    SecretReferences.requireNotOnCommandLine(
        "--kafka-property", "security.protocol", "SSL", false, "--kafka-config FILE");
  }

  @Test
  void aReferenceToAnUndeclaredProviderIsAProblem() {
    TrainingJobConfig c =
        new TrainingJobConfig().apply("kafka.ssl.key.password", "${file:/etc/k.properties:k}");
    assertTrue(
        c.problems().stream().anyMatch(p -> p.contains("config provider file")),
        c.problems()::toString);
    c.apply("kafka.config.providers", "file");
    assertTrue(
        c.problems().stream().anyMatch(p -> p.contains("kafka.config.providers.file.class")),
        c.problems()::toString);
    c.apply("kafka.config.providers.file.class", FILE_PROVIDER);
    assertEquals(List.of(), c.problems());
  }

  @Test
  void kafkaResolvesTheReferenceWhenAClientIsConfigured(@TempDir Path dir) throws Exception {
    Path secrets = dir.resolve("kafka-secrets.properties");
    Files.writeString(secrets, "ssl.key.password=resolved-pw\n");
    TrainingJobConfig c =
        new TrainingJobConfig()
            .apply("kafka.config.providers", "file")
            .apply("kafka.config.providers.file.class", FILE_PROVIDER)
            .apply("kafka.ssl.key.password", "${file:" + secrets + ":ssl.key.password}");
    Properties client = c.clientProperties();
    AdminClientConfig resolved = new AdminClientConfig(client);
    assertEquals("resolved-pw", resolved.getPassword("ssl.key.password").value());
    assertFalse(c.toProperties().toString().contains("resolved-pw"));
  }
}
