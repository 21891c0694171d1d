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
import org.junit.jupiter.api.Assumptions;
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
  void aServerRunsInASessionOfItsOwnSoATerminalsCtrlCNeverReachesIt(@TempDir Path dir)
      throws Exception {
    Assumptions.assumeTrue(Files.exists(Path.of("/proc/self/stat")), "Linux /proc");
    DaemonProcess daemon = new DaemonProcess(dir.resolve("p.pid"), dir.resolve("p.log"), "sleep");
    Process process = daemon.start(List.of("sleep", "60"), Map.of());
    try {
      long mine = session(ProcessHandle.current().pid());
      long its = session(process.pid());
      for (int i = 0; i < 50 && its != process.pid(); i++) { // setsid(2) runs just after exec
        Thread.sleep(20);
        its = session(process.pid());
      }
      assertEquals(process.pid(), its, "the server leads a session of its own (setsid)");
      assertTrue(its != mine);
    } finally {
      daemon.stop(Duration.ofSeconds(5));
    }
  }

  @Test
  void aRestartRunsTheSameCommandAgain(@TempDir Path dir) throws Exception {
    DaemonProcess daemon = new DaemonProcess(dir.resolve("p.pid"), dir.resolve("p.log"), "sleep");
    Process first = daemon.start(List.of("sleep", "61"), Map.of("SOME_VAR", "x"));
    first.destroyForcibly().waitFor();
    assertTrue(daemon.find().isEmpty());
    Process second = daemon.restart();
    try {
      assertEquals(second.pid(), daemon.find().orElseThrow().pid());
      assertTrue(
          second.info().arguments().map(a -> List.of(a).contains("61")).orElse(true),
          "the same arguments");
    } finally {
      daemon.stop(Duration.ofSeconds(5));
    }
  }

  /** The session id of a process: field 6 of /proc/PID/stat (after the parenthesised name). */
  static long session(long pid) throws Exception {
    String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(fields[3]); // state, ppid, pgrp, session
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
  void aStartSeenASecondOffByAnotherJvmIsStillOurs(@TempDir Path dir) throws Exception {
    Process server = new ProcessBuilder("sleep", "60").start();
    try {
      long started = server.info().startInstant().orElseThrow().toEpochMilli();
      // As a JVM started after a clock adjustment sees it: the kernel's boot time a second off.
      Files.writeString(dir.resolve("p.pid"), server.pid() + " " + (started - 1_000));
      DaemonProcess daemon = new DaemonProcess(dir.resolve("p.pid"), dir.resolve("p.log"), "sleep");
      assertEquals(server.pid(), daemon.find().orElseThrow().pid());
      assertTrue(Files.exists(dir.resolve("p.pid")), "the file is kept");
      Files.writeString(
          dir.resolve("p.pid"),
          server.pid() + " " + (started - DaemonProcess.START_TOLERANCE_MILLIS - 1_000));
      assertTrue(daemon.find().isEmpty(), "further off: another process's PID");
    } finally {
      server.destroyForcibly();
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
