package io.dynnibal.deploy.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.ServiceLoader;
import org.apache.flink.metrics.CharacterFilter;
import org.apache.flink.metrics.LogicalScopeProvider;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.metrics.reporter.MetricReporterFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Prometheus reporter a cluster's processes serve their metrics with, on one address. */
class BoundPrometheusReporterTest {
  @Test
  void servesFlinksExpositionOnTheAddressItIsGiven() throws Exception {
    Properties p = new Properties();
    p.setProperty(BoundPrometheusReporterFactory.HOST, "127.0.0.1");
    p.setProperty(BoundPrometheusReporterFactory.PORT, "0");
    BoundPrometheusReporter reporter =
        (BoundPrometheusReporter) new BoundPrometheusReporterFactory().createMetricReporter(p);
    try {
      SimpleCounter counter = new SimpleCounter();
      counter.inc(7);
      reporter.notifyOfAddedMetric(counter, "pairsTrained", new Scoped("taskmanager.dynnibal"));
      HttpURLConnection c =
          (HttpURLConnection)
              URI.create("http://127.0.0.1:" + reporter.port() + "/metrics")
                  .toURL()
                  .openConnection();
      assertEquals(200, c.getResponseCode());
      String body;
      try (InputStream in = c.getInputStream()) {
        body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
      assertTrue(body.contains("flink_taskmanager_dynnibal_pairsTrained 7.0"), body);
    } finally {
      reporter.close();
    }
  }

  @Test
  void theClusterJarRegistersTheFactoryForTheServiceLoader(@TempDir Path dir) throws Exception {
    Path jar = ClusterMetricsJar.write(dir.resolve("lib").resolve("metrics.jar"));
    // Only the jar and the JDK: what the jar declares, not what this test's classpath holds.
    try (URLClassLoader loader =
        new URLClassLoader(
            new URL[] {jar.toUri().toURL()}, MetricReporterFactory.class.getClassLoader())) {
      List<String> found =
          ServiceLoader.load(MetricReporterFactory.class, loader).stream()
              .map(provider -> provider.type().getName())
              .filter(name -> name.startsWith("io.dynnibal."))
              .toList();
      assertEquals(List.of(BoundPrometheusReporterFactory.class.getName()), found);
    }
  }

  /** A metric group with a logical scope, as Flink's reporters read one. */
  private static final class Scoped extends UnregisteredMetricsGroup
      implements LogicalScopeProvider {
    private final String scope;

    Scoped(String scope) {
      this.scope = scope;
    }

    @Override
    public String getLogicalScope(CharacterFilter filter) {
      return scope;
    }

    @Override
    public String getLogicalScope(CharacterFilter filter, char delimiter) {
      return scope.replace('.', delimiter);
    }

    @Override
    public MetricGroup getWrappedMetricGroup() {
      return this;
    }
  }
}
