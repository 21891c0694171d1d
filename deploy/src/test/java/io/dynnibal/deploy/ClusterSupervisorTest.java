package io.dynnibal.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The supervisor's decisions on real processes, with the clock in the test's hands: a killed
 * process is started again after its back-off, a running one is left alone, and restarts are
 * counted where {@code cluster status} reads them (the whole cluster: TaskManagerKillTest).
 */
class ClusterSupervisorTest {
  @Test
  void aKilledProcessIsRestartedAfterItsBackoffAndCounted(@TempDir Path dir) throws Exception {
    DaemonProcess a = new DaemonProcess(dir.resolve("a.pid"), dir.resolve("a.log"), "sleep");
    DaemonProcess b = new DaemonProcess(dir.resolve("b.pid"), dir.resolve("b.log"), "sleep");
    a.start(List.of("sleep", "60"), Map.of());
    long bPid = b.start(List.of("sleep", "60"), Map.of()).pid();
    ClusterSupervisor supervisor = new ClusterSupervisor(dir, List.of(a, b));
    try {
      Instant t = Instant.now();
      supervisor.checkOnce(t);
      long killed = a.find().orElseThrow().pid();
      kill(killed);

      supervisor.checkOnce(t); // notes the exit; the first back-off is 1 s
      assertTrue(a.find().isEmpty(), "not restarted before its back-off");
      supervisor.checkOnce(t.plusMillis(999));
      assertTrue(a.find().isEmpty(), "not restarted before its back-off");
      supervisor.checkOnce(t.plus(RestartBackoff.FIRST));
      long restarted = a.find().orElseThrow().pid();
      assertNotEquals(killed, restarted);
      assertEquals(bPid, b.find().orElseThrow().pid(), "a running process is left alone");
      assertEquals(Map.of("a", 1, "b", 0), ClusterSupervisor.restarts(dir));

      // Killed again soon after: it waits twice as long.
      kill(restarted);
      Instant u = t.plusSeconds(5);
      supervisor.checkOnce(u);
      supervisor.checkOnce(u.plusMillis(1999));
      assertTrue(a.find().isEmpty());
      supervisor.checkOnce(u.plusSeconds(2));
      assertTrue(a.find().isPresent());
      assertEquals(Map.of("a", 2, "b", 0), ClusterSupervisor.restarts(dir));
    } finally {
      DaemonProcess.stopAll(List.of(a, b), Duration.ofSeconds(5));
    }
  }

  private static void kill(long pid) throws Exception {
    ProcessHandle process = ProcessHandle.of(pid).orElseThrow();
    process.destroyForcibly(); // SIGKILL
    process.onExit().get();
  }

  @Test
  void theBackoffDoublesAfterShortRunsAndResetsAfterAStableOne() {
    RestartBackoff backoff = new RestartBackoff();
    Duration short_ = Duration.ofSeconds(3);
    assertEquals(Duration.ofSeconds(1), backoff.after(short_));
    assertEquals(Duration.ofSeconds(2), backoff.after(short_));
    assertEquals(Duration.ofSeconds(4), backoff.after(short_));
    for (int i = 0; i < 10; i++) {
      backoff.after(short_);
    }
    assertEquals(RestartBackoff.MAX, backoff.after(short_), "capped");
    assertEquals(Duration.ofSeconds(1), backoff.after(RestartBackoff.STABLE), "healthy again");
  }
}
