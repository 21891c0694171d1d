package io.dynnibal.jobs.kafka;

import io.dynnibal.stream.KafkaRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Properties;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Passes a source's records on unchanged and checks, whenever the job restores, that the offsets it
 * restores still mean what they meant: each checkpoint records the topic's id and the checkpoint's
 * time; a restore whose topic now has another id (deleted and created again) or, for a compacted
 * topic, whose checkpoint is older than the topic's {@code delete.retention.ms} (compaction may
 * have removed deletes written since) fails with a {@link DataLossException}, or, when the loss is
 * accepted, logs the same message and goes on. Invariant: once past its initialisation, the
 * operator's state names the topic id its source's offsets belong to.
 */
public final class TopicCheck extends ProcessFunction<KafkaRecord, KafkaRecord>
    implements CheckpointedFunction {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(TopicCheck.class);

  private final String topic;
  private final Properties client;
  private final boolean acceptLoss;
  private transient ListState<Tuple2<String, Long>> recorded;
  private transient String topicId;

  /**
   * @param client the job's Kafka client properties
   * @param acceptLoss log the loss and go on instead of failing the job
   */
  public TopicCheck(String topic, Properties client, boolean acceptLoss) {
    this.topic = topic;
    this.client = client;
    this.acceptLoss = acceptLoss;
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    recorded =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>("topic-id", Types.TUPLE(Types.STRING, Types.LONG)));
    TopicFacts now = TopicFacts.describe(client, topic);
    if (context.isRestored()) {
      for (Tuple2<String, Long> r : recorded.get()) {
        Optional<String> problem = problem(r.f0, r.f1, now, System.currentTimeMillis());
        if (problem.isPresent() && !acceptLoss) {
          throw new DataLossException(problem.get());
        }
        problem.ifPresent(p -> LOG.warn("{} (accepted: {})", p, DataLossException.ACCEPT));
      }
    }
    topicId = now.id();
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    recorded.update(List.of(Tuple2.of(topicId, context.getCheckpointTimestamp())));
  }

  @Override
  public void processElement(KafkaRecord record, Context context, Collector<KafkaRecord> out) {
    out.collect(record);
  }

  /**
   * What is wrong with restoring offsets of topic id {@code recordedId} from a checkpoint taken at
   * {@code checkpointMillis}, at {@code nowMillis}, into the topic as it is {@code now}; empty when
   * nothing is.
   */
  static Optional<String> problem(
      String recordedId, long checkpointMillis, TopicFacts now, long nowMillis) {
    if (!recordedId.equals(now.id())) {
      return Optional.of(
          "topic "
              + now.topic()
              + " was deleted and created again since the checkpoint this job restores: its topic"
              + " id was "
              + recordedId
              + " then and is "
              + now.id()
              + " now. The restored offsets are positions in the old topic; in the new one they"
              + " would skip its first records or wait past its end. To go on: start the job"
              + " fresh (without --from-savepoint or --from-latest-checkpoint: it reads the topics"
              + " from their beginning and trains a new model), or restore with "
              + DataLossException.ACCEPT
              + " to read the new topic from the restored offsets");
    }
    Duration age = Duration.ofMillis(nowMillis - checkpointMillis);
    if (now.deleteRetentionMs() >= 0 && age.toMillis() > now.deleteRetentionMs()) {
      return Optional.of(
          "the checkpoint this job restores was taken at "
              + Instant.ofEpochMilli(checkpointMillis)
              + ", "
              + age.toString().substring(2).toLowerCase(Locale.ROOT)
              + " ago: longer than the compacted topic "
              + now.topic()
              + " keeps deletes (delete.retention.ms "
              + now.deleteRetentionMs()
              + "). Compaction may have removed deletes (tombstones) written since, and the"
              + " restored index would keep the targets they deleted. To go on: restore a"
              + " checkpoint or savepoint younger than that, start the job fresh (without"
              + " --from-savepoint or --from-latest-checkpoint), or restore with "
              + DataLossException.ACCEPT
              + " to keep what the index holds. To keep it from happening: a"
              + " topic.targets.delete.retention (the topic's delete.retention.ms) longer than the"
              + " job may stay stopped");
    }
    return Optional.empty();
  }
}
