package io.dynnibal.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint;
import org.apache.flink.runtime.taskexecutor.TaskManagerRunner;

/**
 * The processes of a cluster directory (see {@link FlinkCluster}) and their PID files and outputs:
 * {@code jobmanager.pid}, {@code taskmanager-N.pid} for N in 1..{@code taskmanagers}, {@code
 * supervisor.pid}, their outputs under {@code log/}. The {@code taskmanagers} file holds how many
 * TaskManagers the last start launched; without it the cluster has none.
 */
final class ClusterLayout {
  static final String JOB_MANAGER = StandaloneSessionClusterEntrypoint.class.getName();
  static final String TASK_MANAGER = TaskManagerRunner.class.getName();

  private ClusterLayout() {}

  static DaemonProcess jobManager(Path dir) {
    return new DaemonProcess(
        dir.resolve("jobmanager.pid"), dir.resolve("log").resolve("jobmanager.out"), JOB_MANAGER);
  }

  /** TaskManager {@code i}, counting from 1. */
  static DaemonProcess taskManager(Path dir, int i) {
    return new DaemonProcess(
        dir.resolve("taskmanager-" + i + ".pid"),
        dir.resolve("log").resolve("taskmanager-" + i + ".out"),
        TASK_MANAGER);
  }

  static DaemonProcess supervisor(Path dir) {
    return new DaemonProcess(
        dir.resolve("supervisor.pid"),
        dir.resolve("log").resolve("supervisor.log"),
        ClusterSupervisor.class.getName());
  }

  /** Records how many TaskManagers a start launches: what stop and status look for. */
  static void writeTaskManagerCount(Path dir, int taskManagers) throws IOException {
    Files.writeString(dir.resolve("taskmanagers"), Integer.toString(taskManagers));
  }

  static int taskManagerCount(Path dir) throws IOException {
    Path count = dir.resolve("taskmanagers");
    return Files.exists(count) ? Integer.parseInt(Files.readString(count).trim()) : 0;
  }

  /** Every TaskManager the last start launched, in order. */
  static List<DaemonProcess> taskManagers(Path dir) throws IOException {
    List<DaemonProcess> taskManagers = new ArrayList<>();
    int count = taskManagerCount(dir);
    for (int i = 1; i <= count; i++) {
      taskManagers.add(taskManager(dir, i));
    }
    return taskManagers;
  }

  /** The cluster's servers, the JobManager first: what the supervisor keeps running. */
  static List<DaemonProcess> servers(Path dir) throws IOException {
    List<DaemonProcess> servers = new ArrayList<>(List.of(jobManager(dir)));
    servers.addAll(taskManagers(dir));
    return servers;
  }
}
