package io.dynnibal.jobs.cli;

import io.dynnibal.jobs.deploy.FlinkRestClient;
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
      "Stop a job on a Flink cluster. With --savepoint: stop with a savepoint (the sources stop, a final savepoint is",
      "taken, the sinks' transactions commit) and print its path for `submit --from-savepoint`. Without: cancel",
      "(the retained checkpoints stay)."
    })
final class CancelCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "JOB_ID", description = "The job id (see `dynnibal jobs`).")
  String jobId;

  @Option(names = "--savepoint", arity = "0..1", fallbackValue = "", paramLabel = "DIR",
      description = "Stop with a savepoint, into DIR when given (default: the cluster's savepoint directory).")
  String savepoint;

  @Option(names = "--timeout", defaultValue = "300",
      description = "Seconds to wait for the savepoint (default ${DEFAULT-VALUE}).")
  int timeoutSeconds;

  @Mixin JobManagerOption jobManager;

  @Override
  public Integer call() throws Exception {
    FlinkRestClient cluster = jobManager.client();
    if (savepoint == null) {
      cluster.cancel(jobId);
      System.out.println("cancelled job " + jobId);
      return 0;
    }
    String path = cluster.stopWithSavepoint(jobId, savepoint.isEmpty() ? null : savepoint,
        Duration.ofSeconds(timeoutSeconds));
    System.out.println("stopped job " + jobId + " with savepoint " + path);
    System.out.println("resume it:  ./dynnibal submit --config <the same settings> --from-savepoint " + path
        + jobManager.flag());
    return 0;
  }
}
