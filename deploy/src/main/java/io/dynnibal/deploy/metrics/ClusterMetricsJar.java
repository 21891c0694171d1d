package io.dynnibal.deploy.metrics;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/**
 * The one jar of ours a session cluster's processes load: {@link BoundPrometheusReporter} and its
 * factory, registered for {@link java.util.ServiceLoader}. A reporter must be on a process's
 * classpath when it starts, before any job (which brings the rest of our classes) arrives; the jar
 * is written from this JVM's own classes on every cluster start, so it always matches them.
 */
public final class ClusterMetricsJar {
  private static final List<Class<?>> CLASSES =
      List.of(BoundPrometheusReporter.class, BoundPrometheusReporterFactory.class);

  private ClusterMetricsJar() {}

  /** Writes the jar to {@code out} and returns it. */
  public static Path write(Path out) throws IOException {
    Files.createDirectories(out.getParent());
    Manifest manifest = new Manifest();
    manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    try (JarOutputStream jar = new JarOutputStream(Files.newOutputStream(out), manifest)) {
      for (Class<?> c : CLASSES) {
        String name = c.getName().replace('.', '/') + ".class";
        try (InputStream in = c.getClassLoader().getResourceAsStream(name)) {
          if (in == null) {
            throw new IOException("class file " + name + " is not on this JVM's classpath");
          }
          jar.putNextEntry(new JarEntry(name));
          in.transferTo(jar);
          jar.closeEntry();
        }
      }
      jar.putNextEntry(new JarEntry("META-INF/services/" + MetricReporterFactory.class.getName()));
      jar.write(
          (BoundPrometheusReporterFactory.class.getName() + "\n").getBytes(StandardCharsets.UTF_8));
      jar.closeEntry();
    }
    return out;
  }
}
