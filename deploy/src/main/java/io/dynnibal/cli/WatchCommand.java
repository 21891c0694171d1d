package io.dynnibal.cli;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.watch.MetricsWatch;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code dynnibal watch}: a live view of a running job from its metrics topic. */
@Command(
    name = "watch",
    description = {
      "Follow a running job's metrics topic with a live progress line.",
      "bootstrap.servers and topic.prefix come from --config/--set. The line shows step, loss, steps/s, re-encode",
      "cycles, cache staleness, pairs trained and dead-lettered; evaluations as they come. Starts from the topic's",
      "last reports and follows the latest run (--run ID for one, --all for every one, --from-beginning to replay).",
      "Runs until Ctrl-C, --until-step or --idle-exit; exit 3 when no report came."
    })
final class WatchCommand extends JobSettingsOptions implements Callable<Integer> {
  @Option(
      names = "--until-step",
      defaultValue = "0",
      description = "Exit once a report reaches this step.")
  long untilStep;

  @Option(
      names = "--idle-exit",
      defaultValue = "0",
      description = "Exit after this many seconds without a report (0: never).")
  int idleSeconds;

  @Option(
      names = "--run",
      description =
          "Follow this run only (its id is printed when a view starts; default: the latest).")
  String run;

  @Option(names = "--all", description = "Show the reports of every run, not only the latest.")
  boolean all;

  @Option(
      names = "--from-beginning",
      description = "Read the topic from its beginning (default: from its last reports).")
  boolean fromBeginning;

  @Override
  public Integer call() throws Exception {
    TrainingJobConfig config = config(List.of());
    System.err.printf(
        "following %s on %s (Ctrl-C to stop)%n",
        config.metricsTopic(), config.kafka.bootstrapServers);
    MetricsWatch.Runs runs =
        all
            ? MetricsWatch.Runs.ALL
            : run != null ? MetricsWatch.Runs.only(run) : MetricsWatch.Runs.LATEST;
    Duration idle = idleSeconds > 0 ? Duration.ofSeconds(idleSeconds) : null;
    MetricsWatch.Seen seen =
        MetricsWatch.follow(
            config.clientProperties(),
            config.metricsTopic(),
            MetricsWatch.Following.until(untilStep, idle)
                .bar("training", config.job.maxSteps)
                .runs(runs, !fromBeginning),
            System.err);
    if (seen.last() == null) {
      System.err.println("no report on " + config.metricsTopic());
      return 3;
    }
    return 0;
  }
}
