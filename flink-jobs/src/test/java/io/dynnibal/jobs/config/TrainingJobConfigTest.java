package io.dynnibal.jobs.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.sampler.Samplers;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TrainingJobConfigTest {
  @Test
  void printedSettingsReadBackToTheSameConfiguration() throws Exception {
    TrainingJobConfig changed =
        TrainingJobConfig.load(
            null,
            List.of(
                "shards=4",
                "checkpoint.interval=1.5s",
                "score.scale=12.5",
                "seed=9",
                "model.tower=set-transformer",
                "kafka.security.protocol=SASL_SSL"));
    assertEquals(Duration.ofMillis(1500), changed.job.checkpointInterval);
    List<String> printed = new ArrayList<>();
    changed.toProperties().forEach((k, v) -> printed.add(k + "=" + v));
    TrainingJobConfig reread = TrainingJobConfig.load(null, printed);
    assertEquals(changed.toProperties(), reread.toProperties());
    assertEquals(4, reread.job.shards);
    assertEquals("SASL_SSL", reread.kafka.kafkaProperties.get("security.protocol"));
  }

  @Test
  void stateDirectoriesDefaultUnderTheWorkingDirectoryNotASharedOne() throws Exception {
    TrainingJobConfig config = new TrainingJobConfig().validate();
    Path here = Path.of("").toAbsolutePath();
    Path checkpoints = Path.of(URI.create(config.job.checkpointDir));
    assertEquals(here.resolve("dynnibal-state/checkpoints"), checkpoints);
    assertEquals(here.resolve("dynnibal-state/snapshots"), Path.of(config.job.snapshotDir));
    TrainingJobConfig remote =
        TrainingJobConfig.load(
                null, List.of("checkpoint.dir=s3://bucket/ckpt", "snapshot.dir=/mnt/models"))
            .validate();
    assertEquals("s3://bucket/ckpt", remote.job.checkpointDir, "a URI stays as it is");
    assertEquals("/mnt/models", remote.job.snapshotDir);
  }

  @Test
  void theSinksTransactionsOutliveTheLongestCheckpoint() {
    // A Debian transformer run's first exact re-encode held a checkpoint 647 s, past the 600 s
    // its transactions then had: the broker aborted them and their records were lost.
    TrainingJobConfig defaults = new TrainingJobConfig();
    assertTrue(defaults.problems().isEmpty(), defaults.problems().toString());
    assertTrue(
        defaults
                .transactionTimeout()
                .compareTo(defaults.job.checkpointTimeout.plus(defaults.job.checkpointInterval))
            > 0);
    assertEquals(
        Duration.ofMinutes(20),
        new TrainingJobConfig().apply("checkpoint.timeout", "5m").transactionTimeout());

    TrainingJobConfig tooShort =
        new TrainingJobConfig().apply("kafka.transaction.timeout.ms", "600000");
    assertTrue(
        tooShort.problems().stream()
            .anyMatch(p -> p.startsWith("kafka.transaction.timeout.ms (600000) must exceed")),
        tooShort.problems().toString());
    assertTrue(
        new TrainingJobConfig()
            .apply("kafka.transaction.timeout.ms", "600000")
            .apply("checkpoint.timeout", "5m")
            .problems()
            .isEmpty());
    assertTrue(
        new TrainingJobConfig()
            .apply("kafka.transaction.timeout.ms", "ten minutes")
            .problems()
            .contains("kafka.transaction.timeout.ms must be milliseconds, got \"ten minutes\""));
  }

  @Test
  void secretsArePrintedRedacted() {
    TrainingJobConfig c =
        new TrainingJobConfig()
            .apply("kafka.sasl.jaas.config", "user=\"a\" password=\"p\"")
            .apply("kafka.ssl.truststore.password", "p2")
            .apply("kafka.sasl.mechanism", "PLAIN");
    assertEquals("[redacted]", c.toProperties().get("kafka.sasl.jaas.config"));
    assertEquals("[redacted]", c.toProperties().get("kafka.ssl.truststore.password"));
    assertEquals("PLAIN", c.toProperties().get("kafka.sasl.mechanism"));
  }

  @Test
  void everyPasswordKafkaDeclaresIsRedacted() {
    // Kafka's own ConfigDefs say which client keys are secrets; each must be redacted, also the
    // inline PEM key and certificate chain whose names say nothing.
    assertTrue(
        SettingsTable.KAFKA_PASSWORD_KEYS.containsAll(
            List.of(
                "ssl.truststore.password",
                "ssl.keystore.password",
                "ssl.key.password",
                "ssl.keystore.key",
                "ssl.keystore.certificate.chain",
                "ssl.truststore.certificates",
                "sasl.jaas.config")),
        SettingsTable.KAFKA_PASSWORD_KEYS.toString());
    TrainingJobConfig c = new TrainingJobConfig();
    for (String key : SettingsTable.KAFKA_PASSWORD_KEYS) {
      c.apply("kafka." + key, "value-of-" + key);
    }
    c.apply("kafka.ssl.truststore.location", "/etc/trust.p12");
    c.apply("kafka.listener.name.x.sasl.login.secret", "plugin-secret");
    Map<String, String> printed = c.toProperties();
    for (String key : SettingsTable.KAFKA_PASSWORD_KEYS) {
      assertEquals("[redacted]", printed.get("kafka." + key), key);
    }
    assertEquals("[redacted]", printed.get("kafka.listener.name.x.sasl.login.secret"));
    assertEquals("/etc/trust.p12", printed.get("kafka.ssl.truststore.location"));
    assertFalse(printed.toString().contains("value-of-"), printed.toString());
    assertFalse(printed.toString().contains("plugin-secret"));
    // The job itself still gets them.
    assertEquals("value-of-ssl.key.password", c.clientProperties().getProperty("ssl.key.password"));
  }

  @Test
  void badKeysValuesAndCombinationsAreNamed() {
    IllegalArgumentException unknown =
        assertThrows(
            IllegalArgumentException.class, () -> new TrainingJobConfig().apply("batch.sise", "3"));
    assertTrue(
        unknown.getMessage().contains("batch.sise") && unknown.getMessage().contains("batch.size"));
    IllegalArgumentException number =
        assertThrows(
            IllegalArgumentException.class, () -> new TrainingJobConfig().apply("shards", "two"));
    assertTrue(
        number.getMessage().contains("shards") && number.getMessage().contains("not a number"));
    TrainingJobConfig c =
        new TrainingJobConfig()
            .apply("landmarks", "64")
            .apply("regression.samples", "100")
            .apply("negatives.uniform", "0")
            .apply("sampler", "magic");
    List<String> problems = c.problems();
    assertEquals(3, problems.size(), problems.toString());
    assertThrows(IllegalArgumentException.class, c::validate);
  }

  @Test
  void aTransformersLengthsAndLayersAreCheckedAgainstItsCheckpoint() {
    TrainingJobConfig fine =
        new TrainingJobConfig()
            .apply("model.tower", "transformer")
            .apply("model.output.dim", "384")
            .apply("model.max.tokens", "64")
            .apply("model.query.max.tokens", "16")
            .apply("model.trainable.layers", "2");
    assertEquals(List.of(), fine.problems());
    assertEquals(16, fine.model().queryMaxTokens());
    assertEquals(2, fine.model().trainableLayers());
    List<String> bad =
        new TrainingJobConfig()
            .apply("model.tower", "transformer")
            .apply("model.max.tokens", "1000")
            .apply("model.trainable.layers", "7")
            .problems();
    assertTrue(
        bad.stream().anyMatch(m -> m.startsWith("model.max.tokens must be 3 to 512")),
        bad.toString());
    assertTrue(
        bad.stream().anyMatch(m -> m.startsWith("model.trainable.layers must be 0 (all) to 6")),
        bad.toString());
    List<String> missing =
        new TrainingJobConfig()
            .apply("model.tower", "transformer")
            .apply("model.checkpoint", "/no/such/model")
            .problems();
    assertTrue(
        missing.stream()
            .anyMatch(m -> m.startsWith("model.checkpoint: ") && m.contains("/no/such/model")),
        missing.toString());
  }

  @Test
  void everySamplerIsAcceptedAndOnlyInBatchNeedsNoUniformNegatives() {
    for (String sampler : Samplers.NAMES) {
      TrainingJobConfig c =
          new TrainingJobConfig().apply("sampler", sampler).apply("negatives.uniform", "0");
      assertEquals(
          sampler.equals("in-batch"), c.problems().isEmpty(), sampler + ": " + c.problems());
      assertEquals(sampler, c.sampler().id());
    }
  }

  @Test
  void baselineSettingsAreChecked() {
    List<String> problems =
        new TrainingJobConfig()
            .apply("snm.pool.fraction", "1.5")
            .apply("negative.cache.size", "0")
            .apply("rejection.gamma", "1")
            .apply("topic.pairs", "a b")
            .problems();
    assertEquals(4, problems.size(), problems.toString());
  }

  @Test
  void anUnnamedShareNeedsThePoolOfPositivesAndAShareInTheUnitInterval() {
    List<String> underAll =
        new TrainingJobConfig().apply("negatives.unnamed.share", "0.1").problems();
    assertEquals(1, underAll.size(), underAll.toString());
    assertTrue(underAll.get(0).contains("negatives.unnamed.share"), underAll.toString());
    assertEquals(
        1,
        new TrainingJobConfig()
            .apply("negatives.pool", "positives")
            .apply("negatives.unnamed.share", "1.2")
            .problems()
            .size());
    TrainingJobConfig ok =
        new TrainingJobConfig()
            .apply("negatives.pool", "positives")
            .apply("negatives.unnamed.share", "0.1");
    assertEquals(List.of(), ok.problems());
    assertEquals(0.1, ok.unnamedShare().share());
  }

  @Test
  void exactCyclesRunInGroupsSizedForTheTowerUnlessSet() {
    assertEquals(16384, new TrainingJobConfig().reencodeExactPerBatch());
    assertEquals(
        512, new TrainingJobConfig().apply("model.tower", "transformer").reencodeExactPerBatch());
    assertEquals(
        0,
        new TrainingJobConfig()
            .apply("model.tower", "transformer")
            .apply("reencode.exact.per.batch", "0")
            .reencodeExactPerBatch());
    assertEquals(
        2048,
        new TrainingJobConfig().apply("reencode.exact.per.batch", "2048").reencodeExactPerBatch());
  }
}
