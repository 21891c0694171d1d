package io.dynnibal.cli;

import io.dynnibal.deploy.FlinkClusterClient;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code dynnibal jobs}: what a Flink session cluster runs and has run. */
@Command(
    name = "jobs",
    description =
        "List the jobs of a Flink cluster, newest first: id, state, start, duration, name.")
final class JobsCommand implements Callable<Integer> {
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneId.systemDefault());

  @Mixin JobManagerOption jobManager;

  @Override
  public Integer call() throws Exception {
    List<FlinkClusterClient.Job> jobs;
    try (FlinkClusterClient client = jobManager.client()) {
      jobs = client.jobs();
    }
    if (jobs.isEmpty()) {
      System.out.println("no jobs on " + jobManager.jobManager);
      return 0;
    }
    System.out.printf(
        "%-32s  %-10s  %-19s  %9s  %s%n", "job id", "state", "started", "duration", "name");
    for (FlinkClusterClient.Job j : jobs) {
      Duration d = Duration.ofMillis(Math.max(0, j.durationMs()));
      System.out.printf(
          "%-32s  %-10s  %-19s  %9s  %s%n",
          j.id(),
          j.state(),
          TIME.format(Instant.ofEpochMilli(j.startTime())),
          String.format("%d:%02d:%02d", d.toHours(), d.toMinutesPart(), d.toSecondsPart()),
          j.name());
    }
    return 0;
  }
}
