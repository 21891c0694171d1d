package io.dynnibal.bench.cli;

import io.dynnibal.bench.soak.Soak;
import io.dynnibal.bench.soak.SoakReport;
import io.dynnibal.cli.DemoCommand;
import io.dynnibal.cli.LocalRunOptions;
import io.dynnibal.cli.options.JsonOutput;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.local.Corpus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code dynnibal soak}: the job on the real processes with faults, ending with the pair audit. */
@Command(
    name = "soak",
    description = {
      "Run the training job on real processes while faults are injected, then audit every published pair.",
      "The job runs on this machine's Kafka broker and a supervised Flink cluster of two TaskManagers for --minutes",
      "while faults come in turn: kill -9 of a TaskManager, kill -9 of the broker, a failing trainer task, a burst of",
      "bad records, SIGSTOP of a TaskManager past the heartbeat timeout (then SIGCONT), and a full disk under the",
      "model versions (a tmpfs the soak mounts: that fault needs root). Every published pair is then audited against",
      "the committed steps; JSON: pairs_published, pairs_trained, pairs_dead_lettered, lost, duplicated,",
      "faults_injected, trained_not_published, restores, max_recovery_seconds. Exit 0 only when nothing was lost,",
      "duplicated or made up."
    })
final class SoakCommand implements Callable<Integer> {
  @Option(
      names = "--minutes",
      defaultValue = "15",
      description =
          "How long faults are injected (default ${DEFAULT-VALUE}); the final drain adds a little.")
  double minutes;

  @Option(
      names = "--fault-every",
      defaultValue = "120",
      description = "Seconds between faults (default ${DEFAULT-VALUE}).")
  int faultEverySeconds;

  @Option(
      names = "--taskmanager-memory",
      defaultValue = "4g",
      description = "Process size of each of the two TaskManagers (default ${DEFAULT-VALUE}).")
  String taskManagerMemory;

  @Option(
      names = "--stall-minutes",
      defaultValue = "10",
      description =
          "Stop with a report when a stage makes no progress for this long: the first step, the"
              + " recovery from a fault, the final drain (default ${DEFAULT-VALUE}).")
  double stallMinutes;

  @Option(
      names = "--snapshot-disk-mb",
      defaultValue = "1024",
      description =
          "Size of the tmpfs that holds the model versions, the disk the full-disk fault fills:"
              + " room for a few versions of the model (default ${DEFAULT-VALUE}).")
  int snapshotDiskMegabytes;

  @Mixin JsonOutput json;

  @Mixin LocalRunOptions run;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (minutes <= 0 || faultEverySeconds < 10 || stallMinutes <= 0) {
      throw new ParameterException(
          spec.commandLine(),
          "--minutes and --stall-minutes must be positive and --fault-every at least 10");
    }
    Corpus corpus = run.corpus(spec.commandLine());
    TrainingJobConfig config =
        run.config(
            DemoCommand.demoDefaults(List.of("topic.prefix=soak.", "group.id=dynnibal-soak")));
    Path work = run.workDir("dynnibal-soak-");
    SoakReport report =
        Soak.run(
            new Soak.Options(
                corpus,
                config,
                Duration.ofMillis((long) (minutes * 60_000)),
                Duration.ofSeconds(faultEverySeconds),
                20,
                taskManagerMemory,
                work,
                Duration.ofMillis((long) (stallMinutes * 60_000)),
                snapshotDiskMegabytes),
            System.err);
    json.print(report.figures());
    System.err.println("soak directory (logs, checkpoints): " + work.toAbsolutePath());
    return report.lost() == 0 && report.duplicated() == 0 && report.trainedNotPublished() == 0
        ? 0
        : 1;
  }
}
