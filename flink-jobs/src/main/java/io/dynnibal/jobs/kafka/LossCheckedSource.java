package io.dynnibal.jobs.kafka;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.KafkaSourceEnumState;
import org.apache.flink.connector.kafka.source.split.KafkaPartitionSplit;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * A Kafka source whose readers fail with a {@link DataLossException} where the records at a split's
 * offset are gone from the partition's log (see {@link LossCheckedReader}); everything else is the
 * wrapped source's, its splits and checkpoints included, so a savepoint of the plain source
 * restores into this one and back.
 */
public final class LossCheckedSource<T>
    implements Source<T, KafkaPartitionSplit, KafkaSourceEnumState>, ResultTypeQueryable<T> {
  private static final long serialVersionUID = 1L;

  private final KafkaSource<T> source;
  private final String remedy;

  /**
   * @param source a source whose starting offsets are {@link StrictOffsets}
   * @param remedy what keeps it from happening again, for the error message (the settings that
   *     govern the topic's retention)
   */
  public LossCheckedSource(KafkaSource<T> source, String remedy) {
    this.source = source;
    this.remedy = remedy;
  }

  @Override
  public Boundedness getBoundedness() {
    return source.getBoundedness();
  }

  @Override
  public SourceReader<T, KafkaPartitionSplit> createReader(SourceReaderContext context)
      throws Exception {
    return new LossCheckedReader<>(source.createReader(context), remedy);
  }

  @Override
  public SplitEnumerator<KafkaPartitionSplit, KafkaSourceEnumState> createEnumerator(
      SplitEnumeratorContext<KafkaPartitionSplit> context) {
    return source.createEnumerator(context);
  }

  @Override
  public SplitEnumerator<KafkaPartitionSplit, KafkaSourceEnumState> restoreEnumerator(
      SplitEnumeratorContext<KafkaPartitionSplit> context, KafkaSourceEnumState checkpoint)
      throws Exception {
    return source.restoreEnumerator(context, checkpoint);
  }

  @Override
  public SimpleVersionedSerializer<KafkaPartitionSplit> getSplitSerializer() {
    return source.getSplitSerializer();
  }

  @Override
  public SimpleVersionedSerializer<KafkaSourceEnumState> getEnumeratorCheckpointSerializer() {
    return source.getEnumeratorCheckpointSerializer();
  }

  @Override
  public TypeInformation<T> getProducedType() {
    return source.getProducedType();
  }
}
