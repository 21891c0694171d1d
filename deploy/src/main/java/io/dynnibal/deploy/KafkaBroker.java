package io.dynnibal.deploy;

import io.dynnibal.local.EmbeddedKafkaBroker;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * A single-node Kafka KRaft broker in a JVM of its own, managed through its data directory: {@code
 * broker.pid} (the process), {@code broker.port} (where it serves), {@code broker.log} (its
 * output), {@code data/} (the log). The process is this CLI's own jar running {@link #main}, so the
 * broker is the same Kafka build the job is tested with.
 *
 * <p>Invariant: a PID file exists only while its process runs or until {@link #stop} or {@link
 * #status} finds it dead and removes it.
 */
public final class KafkaBroker {
  /** What {@link #status} finds. */
  public record Status(boolean running, long pid, String bootstrap, boolean serving) {}

  private KafkaBroker() {}

  /**
   * Runs the broker in this JVM until the process is told to stop (SIGTERM): the child's entry
   * point.
   */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    EmbeddedKafkaBroker broker =
        EmbeddedKafkaBroker.startOnPorts(
            dir.resolve("data"), Integer.parseInt(args[1]), Integer.parseInt(args[2]));
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  broker.close();
                  stopped.countDown();
                }));
    System.out.println("broker serving on " + broker.bootstrapServers());
    stopped.await();
  }

  /**
   * Starts the broker as a process that outlives this command, in a session of its own (a
   * terminal's Ctrl-C never reaches it; one while {@code start} waits stops it from here), and
   * waits until it serves.
   *
   * @throws IllegalStateException when one is running on this directory already, or it does not
   *     serve within {@code timeout} (its log's tail is in the message)
   */
  public static Status start(Path dir, int port, int controllerPort, Duration timeout)
      throws Exception {
    try (Closeable lock = DaemonProcess.lock(dir)) {
      return startLocked(dir, port, controllerPort, timeout);
    }
  }

  private static Status startLocked(Path dir, int port, int controllerPort, Duration timeout)
      throws Exception {
    Status current = status(dir);
    if (current.running()) {
      throw new IllegalStateException(
          "a broker is running on "
              + dir
              + " already (pid "
              + current.pid()
              + ", "
              + current.bootstrap()
              + ")");
    }
    DaemonProcess.requireFree("Kafka, --port", port);
    DaemonProcess.requireFree("KRaft controller, --controller-port", controllerPort);
    Files.createDirectories(dir);
    DaemonProcess daemon = daemon(dir);
    Process process =
        daemon.start(
            List.of(
                DaemonProcess.java(),
                "-Xmx1g",
                "-cp",
                System.getProperty("java.class.path"),
                KafkaBroker.class.getName(),
                dir.toAbsolutePath().toString(),
                Integer.toString(port),
                Integer.toString(controllerPort)),
            Map.of());
    try (CleanupOnExit interrupted =
        CleanupOnExit.register(
            () -> {
              try {
                daemon.abandon(process);
              } catch (IOException e) {
                System.err.println("stopping the broker: " + e);
              }
            })) {
      return awaitServing(dir, port, timeout, daemon, process);
    }
  }

  private static Status awaitServing(
      Path dir, int port, Duration timeout, DaemonProcess daemon, Process process)
      throws Exception {
    Files.writeString(dir.resolve("broker.port"), Integer.toString(port));
    String bootstrap = "127.0.0.1:" + port;
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        daemon.abandon(process);
        throw new IllegalStateException(
            "the broker exited with code "
                + process.exitValue()
                + "; its log:\n"
                + daemon.tail(20));
      }
      if (serving(bootstrap)) {
        return new Status(true, process.pid(), bootstrap, true);
      }
      Thread.sleep(500);
    }
    daemon.abandon(process);
    throw new IllegalStateException(
        "the broker did not serve on "
            + bootstrap
            + " within "
            + timeout.toSeconds()
            + " s; its log:\n"
            + daemon.tail(20));
  }

  /** Stops the broker (SIGTERM, then SIGKILL after {@code grace}); false when none was running. */
  public static boolean stop(Path dir, Duration grace) throws Exception {
    if (!Files.isDirectory(dir)) {
      return false;
    }
    try (Closeable lock = DaemonProcess.lock(dir)) {
      return daemon(dir).stop(grace);
    }
  }

  /** Whether the broker of {@code dir} runs, and whether it answers a metadata request. */
  public static Status status(Path dir) throws IOException {
    Optional<ProcessHandle> process = daemon(dir).find();
    if (process.isEmpty()) {
      return new Status(false, -1, null, false);
    }
    String bootstrap = "127.0.0.1:" + Files.readString(dir.resolve("broker.port")).trim();
    return new Status(true, process.get().pid(), bootstrap, serving(bootstrap));
  }

  private static DaemonProcess daemon(Path dir) {
    return new DaemonProcess(
        dir.resolve("broker.pid"), dir.resolve("broker.log"), KafkaBroker.class.getName());
  }

  static boolean serving(String bootstrap) {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "2000");
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "3000");
    try (Admin admin = Admin.create(p)) {
      return !admin.describeCluster().nodes().get(3, TimeUnit.SECONDS).isEmpty();
    } catch (Exception e) {
      return false;
    }
  }
}
