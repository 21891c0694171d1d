package io.dynnibal.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.training.TrainingJobMain;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a session cluster runs with and what a submitted job brings: DJL on one side, dynnibal on
 * the other.
 */
class JobJarTest {
  private static boolean holds(Path entry, String resource) throws Exception {
    if (java.nio.file.Files.isDirectory(entry)) {
      return java.nio.file.Files.exists(entry.resolve(resource));
    }
    try (JarFile jar = new JarFile(entry.toFile())) {
      return jar.getEntry(resource) != null;
    }
  }

  @Test
  void theClusterGetsDjlFlinkAndTheWebSubmissionTheJobGetsOurClasses() throws Exception {
    ClasspathSplit split = ClasspathSplit.ofThisJvm();
    for (String clusterClass :
        List.of(
            "ai/djl/engine/Engine.class",
            "org/apache/flink/runtime/webmonitor/WebSubmissionExtension.class",
            "org/apache/flink/state/rocksdb/EmbeddedRocksDBStateBackend.class")) {
      boolean found = false;
      for (Path entry : split.cluster()) {
        found |= holds(entry, clusterClass);
      }
      assertTrue(found, clusterClass + " is on the cluster classpath");
    }
    for (Path entry : split.job()) {
      assertTrue(ClasspathSplit.holdsOurClasses(entry), entry.toString());
      assertFalse(
          holds(entry, "ai/djl/engine/Engine.class"), "DJL never travels with a job: " + entry);
    }
    for (Path entry : split.cluster()) {
      assertFalse(
          ClasspathSplit.holdsOurClasses(entry), "our classes stay off the cluster: " + entry);
      String name = entry.getFileName().toString();
      for (String cliOnly : List.of("picocli-", "jfreechart-", "kafka_2.13-", "scala-", "junit-")) {
        assertFalse(name.startsWith(cliOnly), "only the CLI needs " + name);
      }
    }
  }

  @Test
  void theJarHoldsEveryModuleOfOursTheEntryClassAndTheSettings(@TempDir Path dir) throws Exception {
    TrainingJobConfig config = new TrainingJobConfig();
    config.kafka.groupId = "g";
    config.kafka.kafkaProperties.put("sasl.jaas.config", "${env:KAFKA_JAAS}");
    config.kafka.kafkaProperties.put("config.providers", "env");
    Path jar = JobJar.write(dir.resolve("job.jar"), config.toPropertiesWithSecrets());
    try (JarFile file = new JarFile(jar.toFile())) {
      assertEquals(
          TrainingJobMain.class.getName(),
          file.getManifest().getMainAttributes().get(Attributes.Name.MAIN_CLASS));
      for (String ours :
          List.of(
              "io/dynnibal/jobs/training/TrainingJobMain.class",
              "io/dynnibal/schemas/TrainingPair.class",
              "io/dynnibal/model/TorchRuntime.class",
              "io/dynnibal/index/sgtree/SgTree.class")) {
        assertNotNull(file.getEntry(ours), ours);
      }
      assertTrue(
          file.stream()
              .noneMatch(
                  e ->
                      e.getName().startsWith("ai/djl/")
                          || e.getName().startsWith("org/apache/flink/")
                          || e.getName().startsWith("io/dynnibal/corpus/")
                          || e.getName().startsWith("io/dynnibal/cli/")),
          "third-party classes, the CLI and the bundled corpus stay out");
      Properties settings = new Properties();
      try (InputStream in = file.getInputStream(file.getEntry(TrainingJobMain.SETTINGS_RESOURCE))) {
        settings.load(in);
      }
      assertEquals(
          config.toPropertiesWithSecrets(),
          new TrainingJobConfig().applyAll(settings).toPropertiesWithSecrets());
    }
  }

  @Test
  void aLiteralSecretIsRefusedAndAReferenceTravelsInsteadOfTheSecret(@TempDir Path dir)
      throws Exception {
    String secret = "jar-s3cret-" + System.nanoTime();
    TrainingJobConfig literal = new TrainingJobConfig();
    literal.kafka.kafkaProperties.put("ssl.keystore.password", secret);
    IllegalArgumentException refused =
        assertThrows(
            IllegalArgumentException.class,
            () -> JobJar.write(dir.resolve("literal.jar"), literal.toPropertiesWithSecrets()));
    assertTrue(refused.getMessage().contains("kafka.ssl.keystore.password"), refused.getMessage());
    assertFalse(refused.getMessage().contains(secret), refused.getMessage());
    assertFalse(java.nio.file.Files.exists(dir.resolve("literal.jar")), "a refused jar is left");

    String reference = "${file:/etc/dynnibal/kafka-secrets.properties:ssl.keystore.password}";
    TrainingJobConfig config = new TrainingJobConfig();
    config.kafka.kafkaProperties.put("config.providers", "file");
    config.kafka.kafkaProperties.put(
        "config.providers.file.class",
        "org.apache.kafka.common.config.provider.FileConfigProvider");
    config.kafka.kafkaProperties.put("ssl.keystore.password", reference);
    Path jar = JobJar.write(dir.resolve("job.jar"), config.toPropertiesWithSecrets());
    try (JarFile file = new JarFile(jar.toFile())) {
      Properties settings = new Properties();
      try (InputStream in = file.getInputStream(file.getEntry(TrainingJobMain.SETTINGS_RESOURCE))) {
        settings.load(in);
      }
      assertEquals(reference, settings.getProperty("kafka.ssl.keystore.password"));
    }
  }

  private static int indexOf(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  @Test
  void aJarWithoutSettingsHasNoSettingsResource(@TempDir Path dir) throws Exception {
    try (JarFile file =
        new JarFile(JobJar.write(dir.resolve("job.jar"), java.util.Map.of()).toFile())) {
      assertEquals(null, file.getEntry(TrainingJobMain.SETTINGS_RESOURCE));
    }
  }
}
