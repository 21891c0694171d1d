package io.dynnibal.deploy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Keeps the processes of a local Flink cluster running: a JobManager or TaskManager that exits
 * (killed, crashed, out of memory) is started again with its own command line, after a back-off
 * ({@link RestartBackoff}), with a line in {@code log/supervisor.log}. Restarts are counted in
 * {@code restarts.json} for {@code cluster status}.
 *
 * <p>What a restart gives back: a TaskManager registers with the JobManager again and its slots let
 * running jobs restore from their last checkpoint. A JobManager comes back empty (the standalone
 * cluster has no high availability); its jobs are resumed from their retained checkpoints with
 * {@code submit --from-latest-checkpoint}.
 *
 * <p>Invariant: the supervisor starts a process only when its PID file names no live process, and
 * never after {@code cluster stop} has signalled it (the stop waits for the supervisor to exit
 * before it stops the servers, so nothing it stops is started again).
 */
public final class ClusterSupervisor {
  /** How often the processes are looked at. */
  static final Duration POLL = Duration.ofMillis(500);

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Path dir;
  private final List<Watched> watched = new ArrayList<>();
  private final Object lock = new Object();
  private volatile boolean stopping;

  private static final class Watched {
    final DaemonProcess daemon;
    final RestartBackoff backoff = new RestartBackoff();
    Instant startedAt; // of the process last seen running
    Instant dueAt; // when it is to be started again; null while it runs
    int restarts;

    Watched(DaemonProcess daemon) {
      this.daemon = daemon;
    }
  }

  ClusterSupervisor(Path dir, List<DaemonProcess> processes) {
    this.dir = dir;
    processes.forEach(p -> watched.add(new Watched(p)));
  }

  /** The supervisor process's entry point: {@code ClusterSupervisor <cluster dir>}. */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]).toAbsolutePath();
    new ClusterSupervisor(dir, ClusterLayout.servers(dir)).run();
  }

  void run() throws Exception {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  synchronized (lock) { // lets a restart in progress finish, then no more
                    stopping = true;
                  }
                  log("stopping: no more restarts");
                }));
    log(
        "supervising "
            + watched.stream().map(w -> w.daemon.name()).toList()
            + " (restart back-off "
            + RestartBackoff.FIRST.toSeconds()
            + " s doubling to "
            + RestartBackoff.MAX.toSeconds()
            + " s)");
    while (!stopping) {
      synchronized (lock) {
        if (!stopping) {
          checkOnce(Instant.now());
        }
      }
      Thread.sleep(POLL.toMillis());
    }
  }

  /** Notes the processes that exited and starts those whose back-off has passed. */
  void checkOnce(Instant now) throws IOException {
    for (Watched w : watched) {
      Optional<ProcessHandle> running = w.daemon.find();
      if (running.isPresent()) {
        w.startedAt = running.get().info().startInstant().orElse(now);
        continue;
      }
      if (w.dueAt == null) {
        Duration uptime = w.startedAt == null ? Duration.ZERO : Duration.between(w.startedAt, now);
        Duration wait = w.backoff.after(uptime);
        w.dueAt = now.plus(wait);
        log(
            w.daemon.name()
                + " is gone after "
                + uptime.toSeconds()
                + " s up; restart "
                + (w.restarts + 1)
                + " in "
                + wait.toSeconds()
                + " s (its output: "
                + w.daemon.log()
                + ")");
      } else if (!now.isBefore(w.dueAt)) {
        try {
          Process p = w.daemon.restart();
          w.startedAt = p.info().startInstant().orElse(now);
          w.restarts++;
          log(w.daemon.name() + " restarted as pid " + p.pid() + " (restart " + w.restarts + ")");
          writeRestarts();
        } catch (IOException | RuntimeException e) {
          w.startedAt = now; // counts as a failed short run: the back-off grows
          log(w.daemon.name() + " could not be started: " + e);
        }
        w.dueAt = null;
      }
    }
  }

  private void writeRestarts() throws IOException {
    Map<String, Integer> counts = new LinkedHashMap<>();
    watched.forEach(w -> counts.put(w.daemon.name(), w.restarts));
    DaemonProcess.writeAtomically(restartsFile(dir), JSON.writeValueAsString(counts));
  }

  /** Restarts per process so far, as the supervisor of {@code dir} counted them. */
  @SuppressWarnings("unchecked")
  static Map<String, Integer> restarts(Path dir) throws IOException {
    Path file = restartsFile(dir);
    return Files.exists(file) ? JSON.readValue(file.toFile(), Map.class) : Map.of();
  }

  static Path restartsFile(Path dir) {
    return dir.resolve("restarts.json");
  }

  private static void log(String line) {
    System.out.println(Instant.now().truncatedTo(ChronoUnit.MILLIS) + " supervisor: " + line);
  }
}
