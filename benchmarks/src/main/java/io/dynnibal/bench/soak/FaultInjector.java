package io.dynnibal.bench.soak;

import io.dynnibal.deploy.FlinkCluster;
import io.dynnibal.deploy.KafkaBroker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * Injects the soak's faults into the processes under its directory: kills and pauses of
 * TaskManagers, the broker's kill and restart, the trainer's drill, bad records, and a full disk
 * under the model versions ({@code snapshot.dir} on a {@link SmallDisk}, kept full for a while and
 * then freed).
 */
final class FaultInjector implements AutoCloseable {
  /**
   * How long a TaskManager stays stopped: past the cluster's heartbeat timeout (20 s), so that the
   * JobManager declares it lost and restores the job while the paused process still holds its
   * tasks; it then resumes as a zombie until it learns it was replaced.
   */
  static final Duration PAUSE = Duration.ofSeconds(30);

  /** What a full disk leaves free: less than any model version takes. */
  private static final long LEFT_ON_FULL_DISK = 64 * 1024;

  private final Path clusterDir;
  private final Path kafkaDir;
  private final int kafkaPort;
  private final int controllerPort;
  private final Path drillFile;
  private final PairLedger pairs;
  private final SmallDisk.Result disk;
  private final Duration diskFullFor;
  private final Consumer<String> log;
  private int taskManagerFaults;
  private long diskFullUntil; // System.nanoTime(); 0 while the disk is not kept full

  FaultInjector(
      Path clusterDir,
      Path kafkaDir,
      int kafkaPort,
      int controllerPort,
      Path drillFile,
      PairLedger pairs,
      SmallDisk.Result disk,
      Duration diskFullFor,
      Consumer<String> log) {
    this.clusterDir = clusterDir;
    this.kafkaDir = kafkaDir;
    this.kafkaPort = kafkaPort;
    this.controllerPort = controllerPort;
    this.drillFile = drillFile;
    this.pairs = pairs;
    this.disk = disk;
    this.diskFullFor = diskFullFor;
    this.log = log;
  }

  /**
   * Injects {@code fault} at committed step {@code atStep}; returns false when this machine cannot
   * (a full disk needs a tmpfs, so root).
   */
  boolean inject(Fault fault, long atStep, String tag) throws Exception {
    switch (fault) {
      case TASKMANAGER_KILL -> {
        int which = nextTaskManager();
        long pid = taskManagerPid(which);
        kill(pid);
        log("fault: kill -9 taskmanager-%d (pid %d) at step %d", which, pid, atStep);
      }
      case TASKMANAGER_PAUSE -> {
        int which = nextTaskManager();
        long pid = taskManagerPid(which);
        signal("STOP", pid);
        log(
            "fault: SIGSTOP to taskmanager-%d (pid %d) at step %d; SIGCONT in %d s",
            which, pid, atStep, PAUSE.toSeconds());
        Thread.sleep(PAUSE.toMillis());
        signal("CONT", pid);
        log("taskmanager-%d (pid %d) resumed", which, pid);
      }
      case BROKER_KILL -> {
        long pid = KafkaBroker.status(kafkaDir).pid();
        kill(pid);
        log("fault: kill -9 the broker (pid %d) at step %d; restarting it in 5 s", pid, atStep);
        Thread.sleep(5000);
        KafkaBroker.Status back =
            KafkaBroker.start(kafkaDir, kafkaPort, controllerPort, Duration.ofSeconds(90));
        log("broker back as pid %d", back.pid());
      }
      case TASK_EXCEPTION -> {
        Files.writeString(drillFile, "soak");
        log("fault: the trainer's task is to fail before its next step (step %d)", atStep);
      }
      case BAD_RECORDS -> {
        int n = pairs.publishBadRecords(tag);
        log("fault: %d bad records published at step %d", n, atStep);
      }
      case DISK_FULL -> {
        if (disk.disk() == null) {
          log("fault: a full disk is skipped: %s", disk.refused());
          return false;
        }
        disk.disk().fill(LEFT_ON_FULL_DISK);
        diskFullUntil = System.nanoTime() + diskFullFor.toNanos();
        log(
            "fault: the model versions' disk is full (%,d bytes free) at step %d, for %d s",
            disk.disk().free(), atStep, diskFullFor.toSeconds());
      }
    }
    return true;
  }

  /**
   * Keeps a full disk full (what a checkpoint's clean-up of old versions frees is taken again)
   * until its time is up, then frees it; returns true at the moment it was freed.
   */
  boolean keepDiskFull() throws IOException {
    if (diskFullUntil == 0) {
      return false;
    }
    if (System.nanoTime() < diskFullUntil) {
      disk.disk().fill(LEFT_ON_FULL_DISK);
      return false;
    }
    disk.disk().release();
    diskFullUntil = 0;
    return true;
  }

  /** Frees and unmounts the disk. */
  @Override
  public void close() throws IOException {
    if (disk.disk() != null) {
      disk.disk().release();
      disk.disk().close();
    }
  }

  /** The TaskManager the next kill or pause takes: the two take turns. */
  private int nextTaskManager() {
    return 1 + taskManagerFaults++ % 2;
  }

  private long taskManagerPid(int which) throws Exception {
    return FlinkCluster.status(clusterDir).taskManagerPids().get(which - 1);
  }

  private void log(String format, Object... args) {
    log.accept(String.format(format, args));
  }

  private static void kill(long pid) throws Exception {
    ProcessHandle process =
        ProcessHandle.of(pid).orElseThrow(() -> new IllegalStateException("no process " + pid));
    process.destroyForcibly();
    process.onExit().get();
  }

  /** Sends SIGSTOP or SIGCONT (Java has no API for either). */
  private static void signal(String name, long pid) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid)).inheritIO().start();
    if (kill.waitFor() != 0) {
      throw new IllegalStateException("kill -" + name + " " + pid + " failed");
    }
  }
}
