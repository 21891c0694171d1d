package io.dynnibal.cli;

import io.dynnibal.deploy.FlinkClusterClient;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code dynnibal cancel}: stop a job on a Flink cluster, with a savepoint to resume from. */
@Command(
    name = "cancel",
    description = {
      "Stop a job on a Flink cluster, with or without a savepoint.",
      "With --savepoint: stop with a savepoint (the sources stop, a final savepoint is taken, the sinks' transactions",
      "commit, the job finishes) and print its path for `submit --from-savepoint`. Without: cancel (the retained",
      "checkpoints stay)."
    })
final class CancelCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "JOB_ID", description = "The job id (see `dynnibal jobs`).")
  String jobId;

  @Option(names = "--savepoint", description = "Stop with a savepoint instead of cancelling.")
  boolean savepoint;

  @Option(
      names = "--savepoint-dir",
      paramLabel = "DIR",
      description =
          "Where the savepoint goes (default: the cluster's savepoint directory); implies --savepoint.")
  java.nio.file.Path savepointDir;

  @Option(
      names = "--timeout",
      defaultValue = "300",
      description = "Seconds to wait for the savepoint (default ${DEFAULT-VALUE}).")
  int timeoutSeconds;

  @Mixin JobManagerOption jobManager;

  @Override
  public Integer call() throws Exception {
    try (FlinkClusterClient cluster = jobManager.client()) {
      return stop(cluster);
    }
  }

  private int stop(FlinkClusterClient cluster) throws Exception {
    if (!savepoint && savepointDir == null) {
      cluster.cancel(jobId);
      System.out.println("cancelled job " + jobId);
      return 0;
    }
    // A relative directory would be resolved on the JobManager, in its working directory: make it
    // this one's.
    String target = savepointDir == null ? null : savepointDir.toAbsolutePath().toUri().toString();
    String path = cluster.stopWithSavepoint(jobId, target, Duration.ofSeconds(timeoutSeconds));
    System.out.println("stopped job " + jobId + " with savepoint " + path);
    System.out.println(
        "resume it:  ./dynnibal submit --config <the same settings> --from-savepoint "
            + path
            + jobManager.flag());
    return 0;
  }
}
