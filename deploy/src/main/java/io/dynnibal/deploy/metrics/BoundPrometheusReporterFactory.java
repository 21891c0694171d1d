package io.dynnibal.deploy.metrics;

import java.util.Properties;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;
import org.apache.flink.util.PortRange;

/**
 * Makes {@link BoundPrometheusReporter}s from a Flink configuration's {@code
 * metrics.reporter.<name>.host} (default {@value #DEFAULT_HOST}) and {@code .port} (a port or a
 * range, default {@value #DEFAULT_PORT}). Found through {@link java.util.ServiceLoader} on the
 * cluster's classpath ({@link ClusterMetricsJar}).
 */
public final class BoundPrometheusReporterFactory implements MetricReporterFactory {
  public static final String HOST = "host";
  public static final String PORT = "port";
  public static final String DEFAULT_HOST = "127.0.0.1";
  public static final String DEFAULT_PORT = "9249";

  @Override
  public MetricReporter createMetricReporter(Properties properties) {
    return new BoundPrometheusReporter(
        properties.getProperty(HOST, DEFAULT_HOST),
        new PortRange(properties.getProperty(PORT, DEFAULT_PORT)));
  }
}
