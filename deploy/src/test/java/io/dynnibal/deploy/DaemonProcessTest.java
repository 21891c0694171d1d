package io.dynnibal.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Servers found again by PID file: ours are stopped, a recycled PID is left alone. */
class DaemonProcessTest {
  @Test
  void aStartedProcessIsFoundAndStopped(@TempDir Path dir) throws Exception {
    DaemonProcess daemon = new DaemonProcess(dir.resolve("p.pid"), dir.resolve("p.log"), "sleep");
    Process process = daemon.start(List.of("sleep", "60"), Map.of());
    assertEquals(process.pid(), daemon.find().orElseThrow().pid());
    assertTrue(daemon.stop(Duration.ofSeconds(10)));
    assertFalse(process.isAlive());
    assertFalse(Files.exists(dir.resolve("p.pid")));
    assertFalse(daemon.stop(Duration.ofSeconds(1)), "nothing left to stop");
  }

  @Test
  void aPidFileOfAnotherProcessIsDroppedAndThatProcessLeftAlone(@TempDir Path dir)
      throws Exception {
    Process stranger = new ProcessBuilder("sleep", "60").start();
    try {
      // The PID is alive but started at another time: a recycled PID, not our server.
      Files.writeString(dir.resolve("p.pid"), stranger.pid() + " 12345");
      DaemonProcess daemon = new DaemonProcess(dir.resolve("p.pid"), dir.resolve("p.log"), "sleep");
      assertFalse(daemon.stop(Duration.ofSeconds(1)));
      assertTrue(stranger.isAlive());
      assertFalse(Files.exists(dir.resolve("p.pid")));
      Files.writeString(dir.resolve("p.pid"), "not a pid file");
      assertTrue(daemon.find().isEmpty());
    } finally {
      stranger.destroyForcibly();
    }
  }

  @Test
  void oneCommandAtATimeStartsOrStopsTheServersOfADirectory(@TempDir Path dir) throws Exception {
    try (java.io.Closeable held = DaemonProcess.lock(dir)) {
      IllegalStateException e =
          assertThrows(IllegalStateException.class, () -> DaemonProcess.lock(dir));
      assertTrue(e.getMessage().contains("another command"), e.getMessage());
    }
    DaemonProcess.lock(dir).close(); // released
  }

  @Test
  void aTakenPortIsRefusedByName() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      IllegalStateException e =
          assertThrows(
              IllegalStateException.class,
              () -> DaemonProcess.requireFree("REST API, --rest-port", taken.getLocalPort()));
      assertTrue(
          e.getMessage().contains(taken.getLocalPort() + " (REST API, --rest-port) is in use"),
          e.getMessage());
    }
  }
}
