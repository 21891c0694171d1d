package io.dynnibal.state;

import java.net.URI;
import java.time.Duration;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.StateBackendOptions;

/**
 * The job configuration every dynnibal job runs with: keyed state in RocksDB, incremental
 * exactly-once checkpoints that survive cancellation (so a stopped job can be resumed). Flink 2
 * takes these from the Configuration given to {@code
 * StreamExecutionEnvironment.getExecutionEnvironment(conf)}; a MiniCluster's own configuration does
 * not reach the job's checkpointing.
 */
public final class RocksDbCheckpointing {
  private RocksDbCheckpointing() {}

  /** Writes the options into {@code conf} and returns it. */
  public static Configuration apply(Configuration conf, URI checkpointDir, Duration interval) {
    conf.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
    conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
    conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpointDir.toString());
    conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, interval);
    conf.set(
        CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
        ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
    return conf;
  }
}
