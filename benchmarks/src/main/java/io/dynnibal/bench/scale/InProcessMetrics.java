package io.dynnibal.bench.scale;

import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/**
 * A Flink metric reporter for a MiniCluster in this JVM: it keeps every registered metric by its
 * full identifier ({@code <host>.taskmanager.<tm>.<job>.<operator>.<subtask>.<group>.<name>}), so a
 * benchmark reads the job's own gauges (targets indexed, tree build time, RocksDB's file sizes)
 * while it runs, without a REST round trip or a log to parse.
 */
public final class InProcessMetrics implements MetricReporter {
  private static final Map<String, Metric> METRICS = new ConcurrentHashMap<>();

  /** Adds the reporter to a job's configuration (before the MiniCluster starts). */
  public static void install(Configuration conf) {
    conf.setString("metrics.reporter.inprocess.factory.class", Factory.class.getName());
  }

  /**
   * The sum of the numeric gauges whose identifier passes {@code identifier}; NaN when there is
   * none.
   */
  public static double sum(Predicate<String> identifier) {
    Map<String, Double> v = values(identifier);
    return v.isEmpty() ? Double.NaN : v.values().stream().mapToDouble(Double::doubleValue).sum();
  }

  /** The largest numeric gauge whose identifier passes {@code identifier}; NaN when none. */
  public static double max(Predicate<String> identifier) {
    return values(identifier).values().stream()
        .mapToDouble(Double::doubleValue)
        .max()
        .orElse(Double.NaN);
  }

  /** Forgets every metric (before a job that must not see the last one's). */
  public static void clear() {
    METRICS.clear();
  }

  /** The numeric gauges whose identifier passes {@code identifier}, by identifier. */
  public static Map<String, Double> values(Predicate<String> identifier) {
    Map<String, Double> out = new java.util.TreeMap<>();
    METRICS.forEach(
        (id, m) -> {
          if (identifier.test(id) && m instanceof Gauge<?> g && g.getValue() instanceof Number v) {
            out.put(id, v.doubleValue());
          }
        });
    return out;
  }

  /** How many metrics pass {@code identifier}. */
  public static long count(Predicate<String> identifier) {
    return METRICS.keySet().stream().filter(identifier).count();
  }

  @Override
  public void open(MetricConfig config) {}

  @Override
  public void close() {}

  @Override
  public void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
    METRICS.put(group.getMetricIdentifier(name), metric);
  }

  @Override
  public void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {
    METRICS.remove(group.getMetricIdentifier(name), metric);
  }

  /** Instantiated by Flink from {@code metrics.reporter.<name>.factory.class}. */
  public static final class Factory implements MetricReporterFactory {
    @Override
    public MetricReporter createMetricReporter(Properties properties) {
      return new InProcessMetrics();
    }
  }
}
