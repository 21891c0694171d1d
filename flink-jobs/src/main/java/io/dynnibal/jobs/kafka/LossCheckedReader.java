package io.dynnibal.jobs.kafka;

import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.connector.kafka.source.split.KafkaPartitionSplit;
import org.apache.flink.core.io.InputStatus;
import org.apache.kafka.clients.consumer.NoOffsetForPartitionException;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;

/**
 * A Kafka source reader that turns the consumer's out-of-range error (its {@code auto.offset.reset}
 * is none, see {@link StrictOffsets}) into a {@link DataLossException} naming each partition and
 * offset, what removes such records, and what the operator can do. Invariant: every other call, and
 * every other failure, is the wrapped reader's unchanged.
 */
final class LossCheckedReader<T> implements SourceReader<T, KafkaPartitionSplit> {
  private final SourceReader<T, KafkaPartitionSplit> reader;
  private final String remedy;

  LossCheckedReader(SourceReader<T, KafkaPartitionSplit> reader, String remedy) {
    this.reader = reader;
    this.remedy = remedy;
  }

  @Override
  public InputStatus pollNext(ReaderOutput<T> output) throws Exception {
    try {
      return reader.pollNext(output);
    } catch (Exception e) {
      Optional<DataLossException> loss = explained(e, remedy);
      if (loss.isPresent()) {
        throw loss.get();
      }
      throw e;
    }
  }

  /** The loss {@code failure} (or a cause of it) reports, if it is an out-of-range error. */
  static Optional<DataLossException> explained(Throwable failure, String remedy) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof OffsetOutOfRangeException oor) {
        return Optional.of(
            new DataLossException(
                message("offsets " + oor.offsetOutOfRangePartitions(), remedy), t));
      }
      if (t instanceof NoOffsetForPartitionException none) {
        return Optional.of(
            new DataLossException(message("no offset for " + none.partitions(), remedy), t));
      }
    }
    return Optional.empty();
  }

  private static String message(String where, String remedy) {
    return "the records the job reads next are no longer in their partition's log ("
        + where
        + "): retention or deleteRecords removed records the job had not read, or the topic was"
        + " deleted and recreated. Reading on from where the log starts now would skip them"
        + " without a trace, so the job stops. To go on: start the job fresh (without"
        + " --from-savepoint or --from-latest-checkpoint: it reads the topics from their beginning"
        + " and trains a new model), or restore with "
        + DataLossException.ACCEPT
        + " to read on from the log's start, losing those records. To keep it from happening: "
        + remedy;
  }

  @Override
  public void start() {
    reader.start();
  }

  @Override
  public List<KafkaPartitionSplit> snapshotState(long checkpointId) {
    return reader.snapshotState(checkpointId);
  }

  @Override
  public CompletableFuture<Void> isAvailable() {
    return reader.isAvailable();
  }

  @Override
  public void addSplits(List<KafkaPartitionSplit> splits) {
    reader.addSplits(splits);
  }

  @Override
  public void notifyNoMoreSplits() {
    reader.notifyNoMoreSplits();
  }

  @Override
  public void handleSourceEvents(SourceEvent event) {
    reader.handleSourceEvents(event);
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) throws Exception {
    reader.notifyCheckpointComplete(checkpointId);
  }

  @Override
  public void notifyCheckpointAborted(long checkpointId) throws Exception {
    reader.notifyCheckpointAborted(checkpointId);
  }

  @Override
  public void pauseOrResumeSplits(
      Collection<String> splitsToPause, Collection<String> splitsToResume) {
    reader.pauseOrResumeSplits(splitsToPause, splitsToResume);
  }

  @Override
  public void close() throws Exception {
    reader.close();
  }
}
