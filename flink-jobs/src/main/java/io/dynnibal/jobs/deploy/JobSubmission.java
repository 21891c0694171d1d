package io.dynnibal.jobs.deploy;

import io.dynnibal.jobs.training.TrainingJobConfig;
import io.dynnibal.jobs.training.TrainingJobMain;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Submitting the training job to a session cluster: build the job jar with the settings inside ({@link JobJar}),
 * upload it, run {@link TrainingJobMain} from it (the JobManager builds the graph, reading the targets topic's end
 * offsets from Kafka), and delete the upload (the submitted job keeps its own copy in the cluster's blob store).
 */
public final class JobSubmission {
  private JobSubmission() {}

  /**
   * @param savepoint restore from this savepoint (null: a fresh start, which reads the topics from their beginning
   *     and trains a new model)
   * @return the job id
   */
  public static String submit(FlinkRestClient cluster, TrainingJobConfig config, String savepoint,
      boolean allowNonRestoredState) throws Exception {
    config.validate();
    Path jar = Files.createTempFile("dynnibal-job-", ".jar");
    try {
      JobJar.write(jar, config.toPropertiesWithSecrets());
      String jarId = cluster.uploadJar(jar);
      try {
        return cluster.runJar(jarId, TrainingJobMain.class.getName(), List.of(), savepoint, allowNonRestoredState);
      } finally {
        cluster.deleteJar(jarId);
      }
    } finally {
      Files.deleteIfExists(jar);
    }
  }
}
