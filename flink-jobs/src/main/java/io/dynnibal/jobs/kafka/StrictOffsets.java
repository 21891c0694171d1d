package io.dynnibal.jobs.kafka;

import java.util.Collection;
import java.util.Map;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;

/**
 * Where a Kafka source's new splits start (another initializer's answer: the log's start or end),
 * with no reset for any other split: the source's consumer gets {@code auto.offset.reset=none}
 * (Flink's source builder takes it from the starting initializer). Invariant: a split reads on from
 * exactly the offset it was restored at, or its fetch fails with Kafka's out-of-range error; it
 * never jumps to an end of the log because the records at its offset are gone.
 */
public final class StrictOffsets implements OffsetsInitializer {
  private static final long serialVersionUID = 1L;

  private final OffsetsInitializer start;

  private StrictOffsets(OffsetsInitializer start) {
    this.start = start;
  }

  /** New splits from {@code start}; no position ever reset. */
  public static OffsetsInitializer of(OffsetsInitializer start) {
    return new StrictOffsets(start);
  }

  @Override
  public Map<TopicPartition, Long> getPartitionOffsets(
      Collection<TopicPartition> partitions, PartitionOffsetsRetriever retriever) {
    return start.getPartitionOffsets(partitions, retriever);
  }

  @Override
  @SuppressWarnings("deprecation") // the type Flink's interface declares
  public OffsetResetStrategy getAutoOffsetResetStrategy() {
    return OffsetResetStrategy.NONE;
  }
}
