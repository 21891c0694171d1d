package io.dynnibal.jobs.training;

import io.dynnibal.jobs.config.SecretReferences;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.ingest.BatchAssembler;
import io.dynnibal.jobs.ingest.DecodeModelUpdates;
import io.dynnibal.jobs.ingest.DecodePairs;
import io.dynnibal.jobs.ingest.DecodeTargets;
import io.dynnibal.jobs.ingest.MiningPace;
import io.dynnibal.jobs.ingest.PairsAfterTargets;
import io.dynnibal.jobs.kafka.TopicCheck;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.jobs.merge.NegativeMerge;
import io.dynnibal.jobs.shard.ShardIndexFunction;
import io.dynnibal.jobs.shard.ShardInput;
import io.dynnibal.jobs.shard.ShardKeys;
import io.dynnibal.jobs.shard.ShardReply;
import io.dynnibal.jobs.shard.ShardSettings;
import io.dynnibal.schemas.DeadLetter;
import io.dynnibal.schemas.ModelUpdate;
import io.dynnibal.schemas.TrainerProgress;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.schemas.TrainingPair;
import io.dynnibal.stream.DeadLetters;
import io.dynnibal.stream.KafkaRecord;
import io.dynnibal.stream.MergedBatch;
import io.dynnibal.stream.QueryBatch;
import io.dynnibal.trainer.FaultInjection;
import io.dynnibal.trainer.TrainerFunction;
import io.dynnibal.trainer.TrainerOperator;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import org.apache.avro.specific.SpecificRecordBase;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.formats.avro.typeutils.AvroTypeInfo;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.ProcessFunction;

/**
 * The streaming training job, one graph (every operator has a fixed uid: a savepoint restores into
 * a later build of the job even when operators are added, and the sources keep their Kafka
 * offsets):
 *
 * <pre>
 * targets (compacted) -> DecodeTargets --------------------------\
 * pairs -> DecodePairs -> BatchAssembler(B) -> MiningPace ------PairsAfterTargets (fan out) -> keyBy(shard) -> ShardIndex
 *                       (reads the progress topic) ^                                                             (RocksDB)
 * model-updates -> DecodeModelUpdates (fan out) ---------------------------------------------------------------/
 *   -> keyBy(batch) -> NegativeMerge
 *   -> Trainer (p=1) -> metrics topic
 *                    -> model-updates topic (every w steps: re-encode map + snapshot)  [feedback edge via Kafka]
 *                    -> progress topic (each batch taken: MiningPace lets batch + mining.lead through)
 * every stage's unusable records -> dead-letters topic
 * </pre>
 *
 * Kafka is the feedback edge because Flink 2 has no iterations. The metrics and dead-letter sinks
 * are transactional and the consumers read_committed, so a restore neither loses nor repeats a
 * record. The model-updates sink is not: an update reaches the shards as soon as it is emitted
 * instead of at the next checkpoint's completion, and the trainer's version numbering makes that
 * safe (an update seen twice is ignored; one of a branch a restore discarded is superseded, see
 * TrainerFunction). Nor is the progress sink: progress is flow control, never a result (see
 * MiningPace).
 *
 * <p>The job's topics are {@link JobTopics}', its Flink configuration {@link JobConfiguration}'s,
 * its Kafka sources and sinks {@link KafkaEndpoints}'.
 */
public final class TrainingJob {
  /** Key groups: the most shards' subtasks a job can be rescaled to. */
  public static final int MAX_PARALLELISM = 128;

  private TrainingJob() {}

  /** Adds the job's graph to {@code env}. */
  public static void build(StreamExecutionEnvironment env, TrainingJobConfig config) {
    build(env, config, FaultInjection.NONE);
  }

  /**
   * The graph with a fault-injection hook in the trainer (reliability tests). Refuses a literal
   * Kafka secret: the graph carries the client properties to the cluster, so secrets go by
   * reference ({@link SecretReferences}).
   */
  public static void build(
      StreamExecutionEnvironment env, TrainingJobConfig config, FaultInjection faults) {
    config.validate();
    SecretReferences.requireByReference(config, "the job graph");
    int[] shardKeys = ShardKeys.keys(config.job.shards, MAX_PARALLELISM);
    HashMap<Integer, Long> targetsAtStart = targetsAtStart(config);
    SingleOutputStreamOperator<ShardInput> targets =
        decoded(
            env,
            config,
            config.targetsTopic(),
            OffsetsInitializer.earliest(),
            "targets",
            new DecodeTargets(shardKeys, targetsAtStart));
    SingleOutputStreamOperator<TrainingPair> pairs =
        decoded(
            env,
            config,
            config.pairsTopic(),
            OffsetsInitializer.earliest(),
            "pairs",
            new DecodePairs());
    // Updates start at the log's end: a new job begins at version 0; a restored one resumes from
    // its offsets.
    SingleOutputStreamOperator<ShardInput> updates =
        decoded(
            env,
            config,
            config.modelUpdatesTopic(),
            OffsetsInitializer.latest(),
            "model-updates",
            new DecodeModelUpdates(
                shardKeys,
                config.index.landmarks,
                config.model.modelOutputDim,
                config.kafka.groupId,
                config.job.snapshotDir));
    List<DataStream<DeadLetter>> deadLetters = new ArrayList<>();
    DataStream<QueryBatch> batches = batches(pairs, config, deadLetters);
    SingleOutputStreamOperator<ShardReply> replies =
        shards(
            shardInputs(targets, batches, config, shardKeys, targetsAtStart),
            updates,
            config,
            shardKeys);
    SingleOutputStreamOperator<TrainingMetrics> metrics =
        trainer(merged(replies, config), config, faults);
    publishTrainerOutputs(metrics, config);
    deadLetters.add(pairs.getSideOutput(DeadLetters.TAG));
    deadLetters.add(updates.getSideOutput(DeadLetters.TAG));
    deadLetters.add(replies.getSideOutput(DeadLetters.TAG));
    deadLetters.add(metrics.getSideOutput(DeadLetters.TAG));
    publish(
        targets.getSideOutput(DeadLetters.TAG).union(deadLetters.toArray(new DataStream[0])),
        config,
        config.deadLettersTopic(),
        DeadLetter.class,
        "dead-letters",
        DeliveryGuarantee.EXACTLY_ONCE);
  }

  /**
   * The end offsets of the targets topic at the graph's build: what "the targets on the topic at
   * start" means, fixed once for the decoder and the gate alike.
   */
  private static HashMap<Integer, Long> targetsAtStart(TrainingJobConfig config) {
    try {
      return new HashMap<>(
          TopicReader.endOffsets(config.clientProperties(), config.targetsTopic()));
    } catch (Exception e) {
      throw new IllegalStateException(
          "cannot read the end offsets of "
              + config.targetsTopic()
              + " from "
              + config.kafka.bootstrapServers
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /**
   * Source {@code name} ({@code topic} from {@code start}), the check of its restored offsets
   * ({@link TopicCheck}) and its decoder, each at p=1.
   */
  private static <T> SingleOutputStreamOperator<T> decoded(
      StreamExecutionEnvironment env,
      TrainingJobConfig config,
      String topic,
      OffsetsInitializer start,
      String name,
      ProcessFunction<KafkaRecord, T> decoder) {
    return env.fromSource(
            KafkaEndpoints.source(config, topic, start),
            WatermarkStrategy.noWatermarks(),
            name,
            TypeInformation.of(KafkaRecord.class))
        .uid(name + "-source")
        .setParallelism(1)
        .process(
            new TopicCheck(topic, config.clientProperties(), config.kafka.acceptDataLoss),
            TypeInformation.of(KafkaRecord.class))
        .name(name + "-topic-check")
        .uid(name + "-topic-check")
        .setParallelism(1)
        .process(decoder)
        .name("decode-" + name)
        .uid("decode-" + name)
        .setParallelism(1);
  }

  /** Query batches of the pairs, paced by the trainer's progress when {@code mining.lead} > 0. */
  private static DataStream<QueryBatch> batches(
      DataStream<TrainingPair> pairs,
      TrainingJobConfig config,
      List<DataStream<DeadLetter>> deadLetters) {
    DataStream<QueryBatch> batches =
        pairs
            .process(new BatchAssembler(config.training.batchSize))
            .name("batch-assembler")
            .uid("batch-assembler")
            .setParallelism(1);
    if (config.job.miningLead <= 0) {
      return batches;
    }
    // The trainer's progress starts at this graph's build: records of an earlier run on the same
    // topic are older, and this run's trainer cannot report before its graph exists.
    SingleOutputStreamOperator<QueryBatch> paced =
        batches
            .transform(
                "mining-pace",
                TypeInformation.of(QueryBatch.class),
                new MiningPace(
                    config.job.miningLead,
                    config.progressTopic(),
                    config.clientProperties(),
                    System.currentTimeMillis()))
            .uid("mining-pace")
            .setParallelism(1);
    deadLetters.add(paced.getSideOutput(DeadLetters.TAG));
    return paced;
  }

  /**
   * Targets and batches reach the shards through one operator, in order: batches after the initial
   * targets.
   */
  private static DataStream<ShardInput> shardInputs(
      DataStream<ShardInput> targets,
      DataStream<QueryBatch> batches,
      TrainingJobConfig config,
      int[] shardKeys,
      HashMap<Integer, Long> targetsAtStart) {
    return targets
        .keyBy(in -> 0, Types.INT)
        .connect(batches.keyBy(b -> 0, Types.INT))
        .transform(
            "pairs-after-targets",
            TypeInformation.of(ShardInput.class),
            new PairsAfterTargets.Operator(
                new PairsAfterTargets(
                    config.targetsTopic(),
                    config.job.targetsFirstMaxWait,
                    shardKeys,
                    targetsAtStart)))
        .name("pairs-after-targets")
        .uid("pairs-after-targets")
        .setParallelism(1);
  }

  /**
   * The shards, keyed by shard key: targets and batches on one input, model updates on the other.
   */
  private static SingleOutputStreamOperator<ShardReply> shards(
      DataStream<ShardInput> inputs,
      DataStream<ShardInput> updates,
      TrainingJobConfig config,
      int[] shardKeys) {
    return inputs
        .keyBy(in -> in.shardKey, Types.INT)
        .connect(updates.keyBy(in -> in.shardKey, Types.INT))
        .process(new ShardIndexFunction(ShardSettings.of(config), shardKeys))
        .name("shard-index")
        .uid("shard-index")
        .setParallelism(config.job.parallelism);
  }

  /** Every shard's reply to a batch merged, keyed by batch. */
  private static SingleOutputStreamOperator<MergedBatch> merged(
      DataStream<ShardReply> replies, TrainingJobConfig config) {
    return replies
        .keyBy(r -> r.batchId, Types.LONG)
        .process(
            new NegativeMerge(
                config.job.shards,
                config.hardNegativesPerStep() > 0 ? config.minedPerExample() : 0,
                config.rescoresCandidates(),
                config.negativesMode(),
                config.uniformDrawsPerStep(),
                config.job.seed))
        .name("negative-merge")
        .uid("negative-merge")
        .setParallelism(config.job.parallelism);
  }

  private static SingleOutputStreamOperator<TrainingMetrics> trainer(
      DataStream<MergedBatch> merged, TrainingJobConfig config, FaultInjection faults) {
    return merged
        .transform(
            "trainer",
            new AvroTypeInfo<>(TrainingMetrics.class),
            new TrainerOperator(
                OperatorSettings.trainer(config),
                config.job.faultDrillFile.isBlank()
                    ? faults
                    : FileTriggeredFault.andThen(config.job.faultDrillFile, faults)))
        .uid("trainer")
        .setParallelism(1);
  }

  /** The trainer's metrics, model updates and (when pacing) progress, each to its topic. */
  private static void publishTrainerOutputs(
      SingleOutputStreamOperator<TrainingMetrics> metrics, TrainingJobConfig config) {
    publish(
            metrics,
            config,
            config.metricsTopic(),
            TrainingMetrics.class,
            "metrics",
            DeliveryGuarantee.EXACTLY_ONCE)
        .disableChaining();
    publish(
            metrics.getSideOutput(TrainerFunction.MODEL_UPDATES),
            config,
            config.modelUpdatesTopic(),
            ModelUpdate.class,
            "model-updates",
            DeliveryGuarantee.AT_LEAST_ONCE)
        .disableChaining();
    if (config.job.miningLead > 0) {
      publish(
              metrics.getSideOutput(TrainerFunction.PROGRESS),
              config,
              config.progressTopic(),
              TrainerProgress.class,
              "progress",
              DeliveryGuarantee.AT_LEAST_ONCE)
          .disableChaining();
    }
  }

  /** Sink {@code name}-sink of {@code stream} to {@code topic}, at p=1. */
  private static <T extends SpecificRecordBase> DataStreamSink<T> publish(
      DataStream<T> stream,
      TrainingJobConfig config,
      String topic,
      Class<T> type,
      String name,
      DeliveryGuarantee guarantee) {
    return stream
        .sinkTo(KafkaEndpoints.sink(config, topic, type, name, guarantee))
        .name(name + "-sink")
        .uid(name + "-sink")
        .setParallelism(1);
  }
}
