package io.dynnibal.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.deploy.metrics.BoundPrometheusReporterFactory;
import java.nio.file.Path;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The configuration and JVM flags a cluster starts with (the processes themselves:
 * ClusterDeploymentTest).
 */
class FlinkClusterTest {
  @Test
  void theJvmsGetTheModuleOpeningsOfTheBuild() {
    assertTrue(
        ClusterJvm.JAVA_17_OPENINGS.contains("--add-opens=java.base/java.lang=ALL-UNNAMED"),
        ClusterJvm.JAVA_17_OPENINGS.toString());
    assertTrue(
        ClusterJvm.JAVA_17_OPENINGS.contains("--add-exports=java.base/sun.net.util=ALL-UNNAMED"),
        ClusterJvm.JAVA_17_OPENINGS.toString());
    assertTrue(
        ClusterJvm.JAVA_17_OPENINGS.stream().noneMatch(f -> f.contains("${")),
        "the resource was filtered");
  }

  @Test
  void flinkReadsTheWrittenConfiguration(@TempDir Path dir) throws Exception {
    Path conf =
        ClusterConfiguration.write(
            dir, new FlinkCluster.Options(18081, 16123, 3, 2, "4g", "1g", 19249, true));
    Configuration c = GlobalConfiguration.loadConfiguration(conf.toString());
    assertEquals("18081", c.toMap().get("rest.port"));
    assertEquals("127.0.0.1", c.toMap().get("rest.bind-address"));
    assertEquals("2", c.toMap().get("taskmanager.numberOfTaskSlots"));
    assertEquals("rocksdb", c.toMap().get("state.backend.type"));
    assertEquals("ai.djl.", c.toMap().get("classloader.parent-first-patterns.additional"));
    assertEquals(
        BoundPrometheusReporterFactory.class.getName(),
        c.toMap().get("metrics.reporter.prom.factory.class"));
    assertEquals("127.0.0.1", c.toMap().get("metrics.reporter.prom.host"));
    assertEquals(
        dir.resolve("savepoints").toUri().toString(),
        c.toMap().get("execution.checkpointing.savepoint-dir"));
  }
}
