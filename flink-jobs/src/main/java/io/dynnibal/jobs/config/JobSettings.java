package io.dynnibal.jobs.config;

import io.dynnibal.settings.Setting;
import java.io.Serializable;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The job settings group: parallelism and pace, checkpoints, where models go, the seed and the
 * length of the run.
 */
public final class JobSettings implements Serializable {
  private static final long serialVersionUID = 1L;

  @Setting(value = "parallelism of the shard and merge operators", min = 1)
  public int parallelism = 2;

  @Setting(value = "index shards (keys of the shard operator)", min = 1)
  public int shards = 2;

  /**
   * How far the shards may mine ahead of the trainer, in query batches. Without a bound the sources
   * fill every buffer on the way, a fast shard mines many batches before the trainer takes the
   * first, and a model update reaches the trainer only behind all of them. Two keep the shards busy
   * while the trainer steps: the shards mine batch b + 2 while the trainer trains b + 1.
   */
  @Setting(
      value =
          "query batches the shards may mine ahead of the last batch the trainer took (the trainer"
              + " reports each batch it takes on the progress topic; 0: no bound, as fast as the"
              + " sources read)",
      min = 0)
  public int miningLead = 2;

  @Setting(
      value =
          "checkpoint directory: a URI, or a path (a relative one is under the working directory)",
      required = true)
  public String checkpointDir = "dynnibal-state/checkpoints";

  @Setting(value = "time between checkpoints, e.g. 5s or 500ms", min = 0, aboveMin = true)
  public Duration checkpointInterval = Duration.ofSeconds(5);

  /**
   * Longer than Flink's default, because a shard key that re-encodes its targets exactly at once (a
   * shard that missed a version, or any exact cycle with reencode.exact.per.batch 0) holds every
   * checkpoint until it is done, and an expired checkpoint fails the job; a transformer re-encoding
   * a large shard takes minutes. The sinks' Kafka transactions must outlive the longest checkpoint:
   * see {@link TrainingJobConfig#transactionTimeout}.
   */
  @Setting(
      value =
          "time a checkpoint may take before it expires and the job restarts from the last one,"
              + " e.g. 30m; the sinks' Kafka transactions get this plus "
              + TrainingJobConfig.TRANSACTION_MARGIN_MINUTES
              + " min unless kafka.transaction.timeout.ms says otherwise (the broker's"
              + " transaction.max.timeout.ms must allow it)",
      min = 0,
      aboveMin = true)
  public Duration checkpointTimeout = Duration.ofMinutes(30);

  @Setting("unaligned checkpoints (barriers overtake buffered batches)")
  public boolean checkpointUnaligned = true;

  /**
   * A batch crosses five network hops on its way to the trainer and the trainer's report one more
   * on its way back to {@link #miningLead}'s pace: with buffers smaller than a batch, the last part
   * of each record would wait up to the timeout at every hop. The job's records are few and large
   * (a batch, a shard's reply, a merged batch), and a positive timeout costs a Flink thread per
   * output edge and subtask that wakes every interval, so 0 sends every record as it is written.
   */
  @Setting(
      value =
          "longest a record waits in a network buffer before Flink sends it; 0 sends each at once"
              + " (Flink's execution.buffer-timeout.interval)",
      min = 0)
  public Duration bufferTimeout = Duration.ZERO;

  @Setting("Snappy-compressed checkpoints and savepoints (restores fast; see JobConfiguration)")
  public boolean checkpointCompression = true;

  @Setting(
      value =
          "directory of model versions and final models (a relative path is under the working"
              + " directory)",
      required = true)
  public String snapshotDir = "dynnibal-state/snapshots";

  @Setting(
      "fault drills (`soak`): a trainer that finds this file deletes it and fails its task before"
          + " the step, as a crash would; empty: off")
  public String faultDrillFile = "";

  @Setting(
      "query batches wait for the targets on the topic at the job's start to be indexed, until this"
          + " long passes with no target coming")
  public Duration targetsFirstMaxWait = Duration.ofMinutes(2);

  @Setting("seed of parameters, sampling and every other random choice")
  public long seed = 42L;

  @Setting(value = "stop training after this many steps (0: never)", min = 0)
  public long maxSteps = 0;

  @Setting(value = "also keep the model every this many steps (0: only the final one)", min = 0)
  public int keepModelEvery = 0;

  @Setting("target ids whose use as a negative the metrics count, comma-separated")
  public String watchTargets = "";

  /**
   * Makes a relative {@link #checkpointDir} or {@link #snapshotDir} absolute, against this JVM's
   * working directory (a checkpoint path becomes a {@code file:} URI): every process of the job
   * then reads the directories the user meant, wherever it runs.
   */
  void resolveDirectories() {
    if (!hasScheme(checkpointDir)) {
      checkpointDir = Path.of(checkpointDir).toAbsolutePath().normalize().toUri().toString();
    }
    if (!hasScheme(snapshotDir)) {
      snapshotDir = Path.of(snapshotDir).toAbsolutePath().normalize().toString();
    }
  }

  private static boolean hasScheme(String location) {
    return location.matches("[a-zA-Z][a-zA-Z0-9+.-]*:.*");
  }
}
