package io.dynnibal.jobs.deploy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A server process that outlives the command that started it (the Kafka broker, a Flink JobManager or TaskManager),
 * found again by its PID file. The process is a JVM running {@code mainClass}; its output is appended to a log file.
 *
 * <p>Invariant: the PID file names a live process running {@code mainClass}, or the next {@link #find} or {@link
 * #stop} removes it. A recycled PID that now belongs to another program is never signalled.
 */
final class DaemonProcess {
  private final Path pidFile;
  private final Path log;
  private final String mainClass;

  DaemonProcess(Path pidFile, Path log, String mainClass) {
    this.pidFile = pidFile;
    this.log = log;
    this.mainClass = mainClass;
  }

  /** The JVM this command runs on: its servers run on the same one. */
  static String java() {
    return ProcessHandle.current().info().command().orElse("java");
  }

  /** Starts {@code command} (a JVM running the main class), output appended to the log, and writes the PID file. */
  Process start(List<String> command, Map<String, String> environment) throws IOException {
    if (!command.contains(mainClass)) {
      throw new IllegalArgumentException("the command does not run " + mainClass + ": " + command);
    }
    Files.createDirectories(log.toAbsolutePath().getParent());
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    builder.environment().putAll(environment);
    Process process = builder.start();
    Files.writeString(pidFile, Long.toString(process.pid()));
    return process;
  }

  /** The live process of the PID file, if any; a stale file (its process died) is removed. */
  Optional<ProcessHandle> find() throws IOException {
    if (!Files.exists(pidFile)) {
      return Optional.empty();
    }
    long pid = Long.parseLong(Files.readString(pidFile).trim());
    Optional<ProcessHandle> process = ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
        .filter(p -> p.info().arguments().map(a -> List.of(a).contains(mainClass)).orElse(true));
    if (process.isEmpty()) {
      Files.deleteIfExists(pidFile);
    }
    return process;
  }

  /**
   * Stops the process: SIGTERM (servers shut down cleanly on it), SIGKILL when it has not exited after {@code grace}.
   * Removes the PID file. False when no process was running.
   */
  boolean stop(Duration grace) throws Exception {
    Optional<ProcessHandle> process = find();
    if (process.isEmpty()) {
      return false;
    }
    process.get().destroy();
    try {
      process.get().onExit().get(grace.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      process.get().destroyForcibly();
      process.get().onExit().get(30, TimeUnit.SECONDS);
    }
    Files.deleteIfExists(pidFile);
    return true;
  }

  /** Forgets a process that failed to start (kills it if it still runs). */
  void abandon(Process process) throws IOException {
    process.destroyForcibly();
    Files.deleteIfExists(pidFile);
  }

  Path log() {
    return log;
  }

  /** The last lines of the log, for error messages. */
  String tail(int lines) {
    try {
      List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }
}
