package io.dynnibal.deploy.metrics;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.exporter.HTTPServer;
import java.io.IOException;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.util.Iterator;
import org.apache.flink.metrics.prometheus.AbstractPrometheusReporter;
import org.apache.flink.util.PortRange;

/**
 * Flink's Prometheus reporter served on one address: Flink's own ({@code PrometheusReporter})
 * listens on every interface and has no setting to change that. The metrics, their names and the
 * exposition format are Flink's ({@link AbstractPrometheusReporter}); only the server differs. The
 * first port of the range that is free on {@code host} is taken, as Flink's does.
 */
public final class BoundPrometheusReporter extends AbstractPrometheusReporter {
  private final HTTPServer server;

  BoundPrometheusReporter(String host, PortRange ports) {
    CollectorRegistry registry = registryOf(this);
    HTTPServer bound = null;
    IOException last = null;
    for (Iterator<Integer> it = ports.getPortsIterator(); it.hasNext() && bound == null; ) {
      try {
        bound = new HTTPServer(new InetSocketAddress(host, it.next()), registry);
      } catch (IOException taken) {
        last = taken;
      }
    }
    if (bound == null) {
      throw new IllegalStateException(
          "no port of " + ports + " is free on " + host + " for the Prometheus reporter", last);
    }
    server = bound;
    log.info("Prometheus metrics served on http://{}:{}/metrics", host, server.getPort());
  }

  /** The port the server took. */
  public int port() {
    return server.getPort();
  }

  @Override
  public void close() {
    server.stop();
    super.close();
  }

  /**
   * The registry {@link AbstractPrometheusReporter} fills, a package-private field of Flink's: the
   * one thing a reporter of another package cannot reach without reflection.
   */
  private static CollectorRegistry registryOf(AbstractPrometheusReporter reporter) {
    try {
      Field field = AbstractPrometheusReporter.class.getDeclaredField("registry");
      field.setAccessible(true);
      return (CollectorRegistry) field.get(reporter);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(
          "this Flink's AbstractPrometheusReporter has no field 'registry' to serve", e);
    }
  }
}
