package io.dynnibal.jobs.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.dynnibal.jobs.config.TrainingJobConfig;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The entry point's settings: defaults, then the bundled resource, then {@code --config}, then
 * {@code --set}.
 */
class TrainingJobMainTest {
  private static ByteArrayInputStream bundled(String text) {
    return new ByteArrayInputStream(text.getBytes(StandardCharsets.ISO_8859_1));
  }

  @Test
  void eachLayerOverridesTheOneBefore(@TempDir Path dir) throws Exception {
    Path file = Files.writeString(dir.resolve("job.properties"), "batch.size=64\nshards=4\n");
    TrainingJobConfig c =
        TrainingJobMain.settings(
            bundled("batch.size=32\nshards=3\ngroup.id=bundled\n"),
            new String[] {"--config", file.toString(), "--set", "shards=5"});
    assertEquals("bundled", c.kafka.groupId);
    assertEquals(64, c.training.batchSize);
    assertEquals(5, c.job.shards);
    assertEquals(new TrainingJobConfig().reencode.reencodeEvery, c.reencode.reencodeEvery);
  }

  @Test
  void withoutAnySettingsTheDefaultsApply() throws Exception {
    assertEquals(
        new TrainingJobConfig().toProperties(),
        TrainingJobMain.settings(null, new String[0]).toProperties());
  }

  @Test
  void secretsSurviveTheBundledResource() throws Exception {
    TrainingJobConfig c =
        TrainingJobMain.settings(bundled("kafka.sasl.jaas.config=secret-value\n"), new String[0]);
    assertEquals("secret-value", c.kafka.kafkaProperties.get("sasl.jaas.config"));
  }

  @Test
  void aLiteralSecretInTheArgumentsIsRefused() throws Exception {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                TrainingJobMain.settings(
                    null, new String[] {"--set", "kafka.ssl.keystore.password=literal-pw"}));
    assertFalse(e.getMessage().contains("literal-pw"), e.getMessage());
    TrainingJobConfig c =
        TrainingJobMain.settings(
            null, new String[] {"--set", "kafka.ssl.keystore.password=${env:KEYSTORE_PW}"});
    assertEquals("${env:KEYSTORE_PW}", c.kafka.kafkaProperties.get("ssl.keystore.password"));
  }

  @Test
  void badArgumentsAndKeysAreNamed() {
    assertThrows(
        IllegalArgumentException.class,
        () -> TrainingJobMain.settings(null, new String[] {"--config"}));
    assertThrows(
        IllegalArgumentException.class,
        () -> TrainingJobMain.settings(null, new String[] {"--x", "y"}));
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> TrainingJobMain.settings(bundled("no.such.key=1\n"), new String[0]));
    assertEquals(true, e.getMessage().contains("no.such.key"), e.getMessage());
  }
}
