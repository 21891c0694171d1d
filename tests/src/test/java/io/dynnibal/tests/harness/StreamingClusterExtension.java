package io.dynnibal.tests.harness;

import io.dynnibal.local.EmbeddedKafkaBroker;
import java.nio.file.Path;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Real components for end-to-end tests, once per test class: an in-process Kafka KRaft broker on a
 * free loopback port (log under {@code target/test-work/}) and a Flink MiniCluster. While a test
 * runs, {@code StreamExecutionEnvironment.getExecutionEnvironment(conf)} submits to that
 * MiniCluster. Both are stopped after the class, the broker last so jobs can still commit on the
 * way down.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final StreamingClusterExtension CLUSTER = StreamingClusterExtension.withTaskManagers(1, 2);
 * }</pre>
 *
 * Test methods may take an {@link EmbeddedKafkaBroker} parameter, or any parameter
 * MiniClusterExtension resolves.
 */
public final class StreamingClusterExtension
    implements BeforeAllCallback,
        AfterAllCallback,
        BeforeEachCallback,
        AfterEachCallback,
        ParameterResolver {

  private final MiniClusterExtension flink;
  private EmbeddedKafkaBroker kafka;
  private Path workDir;

  private StreamingClusterExtension(int taskManagers, int slotsPerTaskManager) {
    this.flink =
        new MiniClusterExtension(
            new MiniClusterResourceConfiguration.Builder()
                .setNumberTaskManagers(taskManagers)
                .setNumberSlotsPerTaskManager(slotsPerTaskManager)
                .build());
  }

  public static StreamingClusterExtension withTaskManagers(
      int taskManagers, int slotsPerTaskManager) {
    return new StreamingClusterExtension(taskManagers, slotsPerTaskManager);
  }

  /** The broker; valid between beforeAll and afterAll. */
  public EmbeddedKafkaBroker kafka() {
    if (kafka == null) {
      throw new IllegalStateException("the broker runs only while the test class runs");
    }
    return kafka;
  }

  /**
   * A fresh directory of this test class under target/test-work, for checkpoints and other files.
   */
  public Path workDir() {
    return workDir;
  }

  /** Slots in the MiniCluster: the largest parallelism a job can run at. */
  public int slots() {
    return flink.getNumberSlots();
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    workDir = WorkDirs.fresh(context.getRequiredTestClass().getSimpleName());
    kafka = EmbeddedKafkaBroker.start(workDir.resolve("kafka"));
    try {
      flink.beforeAll(context);
    } catch (Exception | Error e) {
      kafka.close();
      throw e;
    }
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    try {
      flink.afterAll(context);
    } finally {
      if (kafka != null) {
        kafka.close();
        kafka = null;
      }
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) throws Exception {
    flink.beforeEach(context);
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    flink.afterEach(context);
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == EmbeddedKafkaBroker.class
        || flink.supportsParameter(parameter, context);
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    if (parameter.getParameter().getType() == EmbeddedKafkaBroker.class) {
      return kafka();
    }
    return flink.resolveParameter(parameter, context);
  }
}
