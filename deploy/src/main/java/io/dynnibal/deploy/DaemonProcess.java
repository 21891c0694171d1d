package io.dynnibal.deploy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * A server process that outlives the command that started it (the Kafka broker, a Flink JobManager
 * or TaskManager), found again by its PID file. The process is a JVM running {@code mainClass}; its
 * output is appended to a log file.
 *
 * <p>Invariant: the PID file names a live process that started when the file says, or the next
 * {@link #find} or {@link #stop} removes it. The start time (within {@link
 * #START_TOLERANCE_MILLIS}) is what tells our process from a recycled PID (the JDK cannot read a
 * command line longer than a page, and a Flink process's is far longer, classpath included).
 *
 * <p>The process runs in a session of its own ({@code setsid}), so a terminal's Ctrl-C or hang-up
 * reaches the command that started it and never the server. Its command line and environment are
 * kept beside the PID file ({@code *.launch}), so that a supervisor can start it again as it was.
 */
final class DaemonProcess {
  /** Starts a program in a new session; absent on systems without util-linux. */
  private static final Optional<Path> SETSID =
      Stream.of("/usr/bin/setsid", "/bin/setsid")
          .map(Path::of)
          .filter(Files::isExecutable)
          .findFirst();

  private static final ObjectMapper JSON = new ObjectMapper();

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

  /**
   * Starts {@code command} (a JVM running the main class) in a session of its own, output appended
   * to the log, and writes the PID file and the launch file.
   */
  Process start(List<String> command, Map<String, String> environment) throws IOException {
    if (!command.contains(mainClass)) {
      throw new IllegalArgumentException("the command does not run " + mainClass + ": " + command);
    }
    Files.createDirectories(log.toAbsolutePath().getParent());
    Map<String, Object> launch = new LinkedHashMap<>();
    launch.put("command", command);
    launch.put("environment", environment);
    writeAtomically(launchFile(), JSON.writeValueAsString(launch));
    List<String> inSession = new ArrayList<>();
    // setsid execs the program in the same process (the JVM's child is no group leader): the PID
    // stays the server's.
    SETSID.ifPresent(setsid -> inSession.add(setsid.toString()));
    inSession.addAll(command);
    ProcessBuilder builder =
        new ProcessBuilder(inSession)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    builder.environment().putAll(environment);
    Process process = builder.start();
    long started = process.info().startInstant().map(Instant::toEpochMilli).orElse(0L);
    writeAtomically(pidFile, process.pid() + " " + started);
    return process;
  }

  /**
   * Starts the process again with the command and environment of its last {@link #start}.
   *
   * @throws IllegalStateException when it was never started from this directory
   */
  @SuppressWarnings("unchecked")
  Process restart() throws IOException {
    if (!Files.exists(launchFile())) {
      throw new IllegalStateException("no launch file " + launchFile() + " to restart from");
    }
    Map<String, Object> launch = JSON.readValue(launchFile().toFile(), Map.class);
    return start(
        (List<String>) launch.get("command"), (Map<String, String>) launch.get("environment"));
  }

  /** Written whole or not at all: a concurrent reader never sees half a file. */
  static void writeAtomically(Path file, String content) throws IOException {
    Path partial = file.resolveSibling(file.getFileName() + ".partial");
    Files.writeString(partial, content);
    Files.move(partial, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private Path launchFile() {
    return pidFile.resolveSibling(name() + ".launch");
  }

  /** The name the PID file gives the process ({@code taskmanager-1} for taskmanager-1.pid). */
  String name() {
    return pidFile.getFileName().toString().replaceFirst("\\.pid$", "");
  }

  /**
   * How far apart two JVMs may see one process's start. The JDK adds the process's start, counted
   * from boot, to the boot time the kernel reports in whole seconds, derived from the wall clock: a
   * JVM started after the clock was adjusted (a supervisor, a second command) can see the same
   * start a second off. A PID reused within this window by another process would be taken for ours.
   */
  static final long START_TOLERANCE_MILLIS = 2_000;

  private static boolean startedAt(ProcessHandle process, long startedMillis) {
    return process
        .info()
        .startInstant()
        .map(i -> Math.abs(i.toEpochMilli() - startedMillis) <= START_TOLERANCE_MILLIS)
        .orElse(false);
  }

  /** The live process of the PID file, if any; a stale file (its process died) is removed. */
  Optional<ProcessHandle> find() throws IOException {
    if (!Files.exists(pidFile)) {
      return Optional.empty();
    }
    String[] fields = Files.readString(pidFile).trim().split("\\s+");
    Optional<ProcessHandle> process = Optional.empty();
    if (fields.length == 2 && fields[0].matches("\\d+") && fields[1].matches("\\d+")) {
      long started = Long.parseLong(fields[1]);
      process =
          ProcessHandle.of(Long.parseLong(fields[0]))
              .filter(ProcessHandle::isAlive)
              .filter(p -> startedAt(p, started));
    }
    if (process.isEmpty()) { // dead, recycled, or a file this class did not write
      Files.deleteIfExists(pidFile);
    }
    return process;
  }

  /**
   * Stops the process: SIGTERM (servers shut down cleanly on it), SIGKILL when it has not exited
   * after {@code grace}. Removes the PID file. False when no process was running.
   */
  boolean stop(Duration grace) throws Exception {
    return stopAll(List.of(this), grace);
  }

  /**
   * Stops several processes at once: all are signalled first, then all share the one grace period.
   */
  static boolean stopAll(List<DaemonProcess> daemons, Duration grace) throws Exception {
    List<ProcessHandle> running = new ArrayList<>();
    for (DaemonProcess daemon : daemons) {
      daemon.find().ifPresent(running::add);
    }
    running.forEach(ProcessHandle::destroy);
    long deadline = System.nanoTime() + grace.toNanos();
    for (ProcessHandle process : running) {
      try {
        process.onExit().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        process.destroyForcibly();
        process.onExit().get(30, TimeUnit.SECONDS);
      }
    }
    for (DaemonProcess daemon : daemons) {
      Files.deleteIfExists(daemon.pidFile);
    }
    return !running.isEmpty();
  }

  /**
   * Takes the directory's lock for one start or stop, so that two commands on one directory cannot
   * both start servers (the second would overwrite the first's PID files and orphan its processes).
   *
   * @throws IllegalStateException when another command holds it
   */
  static Closeable lock(Path dir) throws IOException {
    Files.createDirectories(dir);
    FileChannel channel =
        FileChannel.open(dir.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    FileLock lock;
    try {
      lock = channel.tryLock();
    } catch (OverlappingFileLockException e) {
      lock = null;
    }
    if (lock == null) {
      channel.close();
      throw new IllegalStateException(
          "another command is starting or stopping the servers of " + dir);
    }
    return channel::close; // closing the channel releases the lock
  }

  /**
   * Fails when a port is taken on 127.0.0.1: a server started on it would die, and meanwhile
   * whatever holds the port would answer the readiness checks in its place.
   */
  static void requireFree(String what, int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress("127.0.0.1", port));
    } catch (IOException e) {
      throw new IllegalStateException(
          "port "
              + port
              + " ("
              + what
              + ") is in use on 127.0.0.1: another server runs"
              + " there; stop it or choose another port");
    }
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
