package io.dynnibal.deploy;

import io.dynnibal.jobs.config.SecretReferences;
import io.dynnibal.jobs.training.TrainingJobMain;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;

/**
 * The jar {@code dynnibal submit} uploads to a session cluster: dynnibal's own classes (the {@link
 * ClasspathSplit#job} entries, flattened into one jar: not the CLI's, nor its bundled corpus; the
 * cluster provides every third-party jar), {@link TrainingJobMain} as its entry class, and
 * optionally the job's settings as the resource {@value TrainingJobMain#SETTINGS_RESOURCE}, so that
 * they travel with the jar instead of in program arguments (which the web UI shows). The cluster
 * keeps the jar in its blob store, so the jar never holds a literal Kafka secret: secrets travel as
 * config provider references ({@link SecretReferences}), resolved by the Kafka clients on the
 * cluster.
 */
public final class JobJar {
  private JobJar() {}

  /**
   * Writes the jar to {@code out}; {@code settings} (may be empty) become the settings resource.
   *
   * @throws IllegalArgumentException when a {@code kafka.*} setting holds a literal secret (nothing
   *     is written)
   */
  public static Path write(Path out, Map<String, String> settings) throws IOException {
    List<String> literal =
        settings.entrySet().stream()
            .filter(
                e ->
                    e.getKey().startsWith("kafka.")
                        && SecretReferences.isLiteralSecret(
                            e.getKey().substring("kafka.".length()), e.getValue()))
            .map(Map.Entry::getKey)
            .sorted()
            .toList();
    if (!literal.isEmpty()) {
      throw new IllegalArgumentException(
          String.join(", ", literal)
              + ": a secret in plain text would travel in the job jar, which the cluster keeps in"
              + " its blob store; "
              + SecretReferences.HOW);
    }
    Manifest manifest = new Manifest();
    manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, TrainingJobMain.class.getName());
    Set<String> written = new HashSet<>();
    try (JarOutputStream jar = new JarOutputStream(Files.newOutputStream(out), manifest)) {
      written.add(JarFile.MANIFEST_NAME);
      for (Path entry : ClasspathSplit.ofThisJvm().job()) {
        if (Files.isDirectory(entry)) {
          copyDirectory(entry, jar, written);
        } else {
          copyJar(entry, jar, written);
        }
      }
      if (!settings.isEmpty()) {
        Properties properties = new Properties();
        properties.putAll(settings);
        StringWriter text = new StringWriter();
        properties.store(text, "the job's settings, written by dynnibal submit");
        jar.putNextEntry(new JarEntry(TrainingJobMain.SETTINGS_RESOURCE));
        jar.write(
            text.toString()
                .getBytes(StandardCharsets.ISO_8859_1)); // Properties.load(InputStream)'s charset
        jar.closeEntry();
      }
    }
    return out;
  }

  private static void copyDirectory(Path root, JarOutputStream jar, Set<String> written)
      throws IOException {
    try (Stream<Path> files = Files.walk(root)) {
      for (Path file : files.filter(Files::isRegularFile).sorted().toList()) {
        String name = root.relativize(file).toString().replace('\\', '/');
        try (InputStream in = Files.newInputStream(file)) {
          copy(name, in, jar, written);
        }
      }
    }
  }

  private static void copyJar(Path source, JarOutputStream jar, Set<String> written)
      throws IOException {
    try (JarFile in = new JarFile(source.toFile())) {
      Enumeration<JarEntry> entries = in.entries();
      while (entries.hasMoreElements()) {
        JarEntry entry = entries.nextElement();
        if (!entry.isDirectory()) {
          try (InputStream data = in.getInputStream(entry)) {
            copy(entry.getName(), data, jar, written);
          }
        }
      }
    }
  }

  /**
   * Copies one file unless it is skipped or already written (the first classpath entry wins, as in
   * the JVM).
   */
  private static void copy(String name, InputStream data, JarOutputStream jar, Set<String> written)
      throws IOException {
    boolean signature =
        name.startsWith("META-INF/")
            && (name.endsWith(".SF") || name.endsWith(".RSA") || name.endsWith(".DSA"));
    if (signature || !written.add(name)) {
      return;
    }
    jar.putNextEntry(new JarEntry(name));
    data.transferTo(jar);
    jar.closeEntry();
  }
}
