package io.dynnibal.jobs.training;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.state.RocksDbCheckpointing;
import java.net.URI;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.TaskManagerOptions;

/**
 * The Flink configuration the job runs under: RocksDB state with incremental checkpoints, unaligned
 * barriers, buffer debloating, compressed snapshots, no Kryo, and {@link
 * TrainingJob#MAX_PARALLELISM} key groups.
 */
public final class JobConfiguration {
  private JobConfiguration() {}

  /** The configuration of the job with {@code config}'s settings. */
  public static Configuration of(TrainingJobConfig config) {
    Configuration conf =
        RocksDbCheckpointing.apply(
            new Configuration(),
            URI.create(config.job.checkpointDir),
            config.job.checkpointInterval);
    conf.set(PipelineOptions.GENERIC_TYPES, false);
    conf.set(CheckpointingOptions.CHECKPOINTING_TIMEOUT, config.job.checkpointTimeout);
    // The job is backpressured by design (sources read far faster than shards sample and the
    // trainer steps), and the feedback edge (model updates) is only as fast as checkpoints commit.
    // Aligned barriers would queue behind every buffered batch; unaligned ones overtake them, so a
    // model update reaches the shards about one interval later.
    conf.set(CheckpointingOptions.ENABLE_UNALIGNED, config.job.checkpointUnaligned);
    conf.set(PipelineOptions.MAX_PARALLELISM, TrainingJob.MAX_PARALLELISM);
    conf.set(ExecutionOptions.BUFFER_TIMEOUT, config.job.bufferTimeout);
    // Shards work at different speeds and the merge waits for the slowest. A shard that runs ahead
    // has mined its batches with the model version it held then, so a model update reaches the
    // trainer only after every batch buffered before the slowest shard, as many as Flink's fixed
    // network buffers hold. Buffer debloating sizes the buffers to about a second of each input's
    // throughput instead.
    conf.set(TaskManagerOptions.BUFFER_DEBLOAT_ENABLED, true);
    // Flink 2.2 restores managed operator state from an uncompressed file one read() system call
    // per byte (CompressibleFSDataInputStream has no bulk read); the compressed stream buffers. The
    // trainer's parameters do not take that path (raw state, TrainerOperator); the other
    // operators' managed state (the sources' splits, savepoints of keyed state) does.
    conf.set(ExecutionOptions.SNAPSHOT_COMPRESSION, config.job.checkpointCompression);
    return conf;
  }
}
