package io.dynnibal.cli;

import io.dynnibal.cli.options.CreatedTopics;
import io.dynnibal.deploy.FlinkClusterClient;
import io.dynnibal.deploy.JobSubmission;
import io.dynnibal.deploy.RetainedCheckpoints;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.jobs.training.TrainingJobMain;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code dynnibal submit}: the training job onto a running Flink session cluster. */
@Command(
    name = "submit",
    description = {
      "Submit the training job to a Flink session cluster over its REST API, as `flink run` does.",
      "The job graph is built here and the job jar goes with it; the settings travel inside the jar, so a Kafka secret",
      "must be a config provider reference such as $${file:PATH:KEY} (a literal one is refused). Creates the job's",
      "missing Kafka topics first. Unless set, checkpoint.dir is the cluster's execution.checkpointing.dir and",
      "snapshot.dir its sibling snapshots/. Resume a job stopped with `cancel --savepoint` by submitting the same",
      "settings with --from-savepoint; resume one whose JobManager died (a standalone cluster forgets its jobs with",
      "it) with --from-latest-checkpoint."
    })
final class SubmitCommand extends JobSettingsOptions implements Callable<Integer> {
  @Mixin JobManagerOption jobManager;

  @Option(
      names = "--from-savepoint",
      description = "Restore from this savepoint (the path `cancel --savepoint` printed).")
  String savepoint;

  @Option(
      names = "--from-latest-checkpoint",
      description =
          "Restore from the newest checkpoint that a job of the same group.id left in checkpoint.dir (after a JobManager was lost, or the cluster stopped).")
  boolean fromLatestCheckpoint;

  @Option(
      names = "--allow-non-restored-state",
      description =
          "Restore even when the savepoint holds state that no operator of this job claims.")
  boolean allowNonRestoredState;

  @Mixin CreatedTopics topics;

  @Override
  public Integer call() throws Exception {
    TrainingJobConfig config = config(List.of()).validate();
    List<String> created =
        JobTopics.createMissing(
            config.clientProperties(), config, topics.partitions(), topics.replication());
    if (!created.isEmpty()) {
      System.out.println("created topics " + created);
    }
    try (FlinkClusterClient cluster = jobManager.client()) {
      return submit(config, cluster);
    }
  }

  private int submit(TrainingJobConfig config, FlinkClusterClient cluster) throws Exception {
    for (String line :
        JobSubmission.useClusterDirectories(
            cluster, config, userSets("checkpoint.dir"), userSets("snapshot.dir"))) {
      System.out.println("from the cluster: " + line);
    }
    if (fromLatestCheckpoint) {
      if (savepoint != null) {
        throw new IllegalArgumentException(
            "--from-savepoint and --from-latest-checkpoint: choose one");
      }
      savepoint =
          RetainedCheckpoints.latest(config.job.checkpointDir, config.kafka.groupId)
              .orElseThrow(
                  () ->
                      new IllegalStateException(
                          "no completed checkpoint of group.id "
                              + config.kafka.groupId
                              + " under "
                              + config.job.checkpointDir))
              .toUri()
              .toString();
    }
    String jobId = JobSubmission.submit(cluster, config, savepoint, allowNonRestoredState);
    System.out.printf(
        "submitted job %s \"%s\" to %s%s%n",
        jobId,
        TrainingJobMain.jobName(config),
        cluster.base(),
        savepoint == null ? "" : " restored from " + savepoint);
    StringBuilder settings = new StringBuilder(configFile == null ? "" : " --config " + configFile);
    overrides.forEach(o -> settings.append(" --set ").append(o));
    System.out.printf(
        "follow it:  ./dynnibal watch%s%nstop it:    ./dynnibal cancel %s --savepoint%s%n",
        settings, jobId, jobManager.flag());
    return 0;
  }
}
