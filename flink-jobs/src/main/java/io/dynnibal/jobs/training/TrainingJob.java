package io.dynnibal.jobs.training;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.ingest.BatchAssembler;
import io.dynnibal.jobs.ingest.DecodeModelUpdates;
import io.dynnibal.jobs.ingest.DecodePairs;
import io.dynnibal.jobs.ingest.DecodeTargets;
import io.dynnibal.jobs.ingest.MiningPace;
import io.dynnibal.jobs.ingest.PairsAfterTargets;
import io.dynnibal.jobs.ingest.RawKafkaDeserializer;
import io.dynnibal.jobs.kafka.AvroValueSchema;
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
import io.dynnibal.state.RocksDbCheckpointing;
import io.dynnibal.stream.DeadLetters;
import io.dynnibal.stream.KafkaRecord;
import io.dynnibal.stream.MergedBatch;
import io.dynnibal.stream.QueryBatch;
import io.dynnibal.trainer.FaultInjection;
import io.dynnibal.trainer.TrainerFunction;
import io.dynnibal.trainer.TrainerOperator;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.avro.specific.SpecificRecordBase;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.formats.avro.typeutils.AvroTypeInfo;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;

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
 */
public final class TrainingJob {
  /** Key groups: the most shards' subtasks a job can be rescaled to. */
  public static final int MAX_PARALLELISM = 128;

  private TrainingJob() {}

  /**
   * The job's topics: targets compacted (the latest text per id; a tombstone deletes), the others
   * append-only. The model-updates topic has one partition: updates must arrive in version order.
   */
  public static List<NewTopic> topics(TrainingJobConfig config, int partitions, short replication) {
    return List.of(
        new NewTopic(config.targetsTopic(), partitions, replication)
            .configs(java.util.Map.of("cleanup.policy", "compact")),
        new NewTopic(config.pairsTopic(), partitions, replication),
        new NewTopic(config.modelUpdatesTopic(), 1, replication),
        new NewTopic(config.progressTopic(), 1, replication),
        new NewTopic(config.metricsTopic(), 1, replication),
        new NewTopic(config.deadLettersTopic(), 1, replication));
  }

  /**
   * Creates those of {@link #topics} that do not exist yet; returns their names.
   *
   * @throws IllegalStateException naming the bootstrap servers when Kafka does not answer within 30
   *     s
   */
  public static List<String> createMissingTopics(
      Properties client, TrainingJobConfig config, int partitions, short replication)
      throws InterruptedException {
    Properties admin = new Properties();
    admin.putAll(client);
    admin.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
    try (Admin kafka = Admin.create(admin)) {
      Set<String> existing = kafka.listTopics().names().get();
      List<NewTopic> missing =
          topics(config, partitions, replication).stream()
              .filter(t -> !existing.contains(t.name()))
              .toList();
      kafka.createTopics(missing).all().get();
      return missing.stream().map(NewTopic::name).toList();
    } catch (ExecutionException e) {
      throw new IllegalStateException(
          "cannot create the job's topics on Kafka at "
              + client.get("bootstrap.servers")
              + " (bootstrap.servers): "
              + e.getCause().getMessage(),
          e.getCause());
    }
  }

  /** The Flink configuration of the job: RocksDB, incremental checkpoints, no Kryo. */
  public static Configuration flinkConfiguration(TrainingJobConfig config) {
    Configuration conf =
        RocksDbCheckpointing.apply(
            new Configuration(), URI.create(config.checkpointDir), config.checkpointInterval);
    conf.set(PipelineOptions.GENERIC_TYPES, false);
    conf.set(
        org.apache.flink.configuration.CheckpointingOptions.CHECKPOINTING_TIMEOUT,
        config.checkpointTimeout);
    // The job is backpressured by design (sources read far faster than shards sample and the
    // trainer steps), and the feedback edge (model updates) is only as fast as checkpoints commit.
    // Aligned barriers would queue behind every buffered batch; unaligned ones overtake them, so a
    // model update reaches the shards about one interval later.
    conf.set(
        org.apache.flink.configuration.CheckpointingOptions.ENABLE_UNALIGNED,
        config.checkpointUnaligned);
    conf.set(PipelineOptions.MAX_PARALLELISM, MAX_PARALLELISM);
    conf.set(org.apache.flink.configuration.ExecutionOptions.BUFFER_TIMEOUT, config.bufferTimeout);
    // Shards work at different speeds and the merge waits for the slowest. A shard that runs ahead
    // has mined its batches with the model version it held then, so a model update reaches the
    // trainer only after every batch buffered before the slowest shard: with Flink's fixed network
    // buffers (10 x 32 KB per input gate) some 20 query batches, 20 steps. Buffer debloating sizes
    // the buffers to about a second of each input's throughput instead.
    conf.set(org.apache.flink.configuration.TaskManagerOptions.BUFFER_DEBLOAT_ENABLED, true);
    // Flink 2.2 restores managed operator state from an uncompressed file one read() system call
    // per byte (CompressibleFSDataInputStream has no bulk read); the compressed stream buffers.
    // The trainer's ~200 MB of parameters no longer take that path (raw state, TrainerOperator),
    // the other operators' managed state (the sources' splits, savepoints of keyed state) still
    // does.
    conf.set(
        org.apache.flink.configuration.ExecutionOptions.SNAPSHOT_COMPRESSION,
        config.checkpointCompression);
    return conf;
  }

  /** Adds the job's graph to {@code env}. */
  public static void build(StreamExecutionEnvironment env, TrainingJobConfig config) {
    build(env, config, FaultInjection.NONE);
  }

  /** The graph with a fault-injection hook in the trainer (reliability tests). */
  public static void build(
      StreamExecutionEnvironment env, TrainingJobConfig config, FaultInjection faults) {
    config.validate();
    int[] shardKeys = ShardKeys.keys(config.shards, MAX_PARALLELISM);
    // What "the targets on the topic at start" means, fixed once for the decoder and the gate
    // alike.
    HashMap<Integer, Long> targetsAtStart;
    try {
      targetsAtStart =
          new HashMap<>(TopicReader.endOffsets(config.clientProperties(), config.targetsTopic()));
    } catch (Exception e) {
      throw new IllegalStateException(
          "cannot read the end offsets of "
              + config.targetsTopic()
              + " from "
              + config.bootstrapServers
              + ": "
              + e.getMessage(),
          e);
    }

    SingleOutputStreamOperator<ShardInput> targets =
        env.fromSource(
                source(config, config.targetsTopic(), OffsetsInitializer.earliest()),
                WatermarkStrategy.noWatermarks(),
                "targets")
            .uid("targets-source")
            .setParallelism(1)
            .process(new DecodeTargets(shardKeys, targetsAtStart))
            .name("decode-targets")
            .uid("decode-targets")
            .setParallelism(1);
    SingleOutputStreamOperator<TrainingPair> pairs =
        env.fromSource(
                source(config, config.pairsTopic(), OffsetsInitializer.earliest()),
                WatermarkStrategy.noWatermarks(),
                "pairs")
            .uid("pairs-source")
            .setParallelism(1)
            .process(new DecodePairs())
            .name("decode-pairs")
            .uid("decode-pairs")
            .setParallelism(1);
    // Updates start at the log's end: a new job begins at version 0; a restored one resumes from
    // its offsets.
    SingleOutputStreamOperator<ShardInput> updates =
        env.fromSource(
                source(config, config.modelUpdatesTopic(), OffsetsInitializer.latest()),
                WatermarkStrategy.noWatermarks(),
                "model-updates")
            .uid("model-updates-source")
            .setParallelism(1)
            .process(new DecodeModelUpdates(shardKeys, config.landmarks, config.modelOutputDim))
            .name("decode-model-updates")
            .uid("decode-model-updates")
            .setParallelism(1);

    DataStream<QueryBatch> batches =
        pairs
            .process(new BatchAssembler(config.batchSize))
            .name("batch-assembler")
            .uid("batch-assembler")
            .setParallelism(1);
    List<DataStream<DeadLetter>> deadLetters = new ArrayList<>();
    if (config.miningLead > 0) {
      // The trainer's progress starts at this graph's build: records of an earlier run on the same
      // topic are older, and this run's trainer cannot report before its graph exists.
      SingleOutputStreamOperator<QueryBatch> paced =
          batches
              .transform(
                  "mining-pace",
                  TypeInformation.of(QueryBatch.class),
                  new MiningPace(
                      config.miningLead,
                      config.progressTopic(),
                      config.clientProperties(),
                      System.currentTimeMillis()))
              .uid("mining-pace")
              .setParallelism(1);
      deadLetters.add(paced.getSideOutput(DeadLetters.TAG));
      batches = paced;
    }
    // Targets and batches reach the shards through one operator, in order: batches after the
    // initial targets.
    DataStream<ShardInput> shardInputs =
        targets
            .keyBy(in -> 0, org.apache.flink.api.common.typeinfo.Types.INT)
            .connect(batches.keyBy(b -> 0, org.apache.flink.api.common.typeinfo.Types.INT))
            .transform(
                "pairs-after-targets",
                TypeInformation.of(ShardInput.class),
                new PairsAfterTargets.Operator(
                    new PairsAfterTargets(
                        config.targetsTopic(),
                        config.targetsFirstMaxWait,
                        shardKeys,
                        targetsAtStart)))
            .name("pairs-after-targets")
            .uid("pairs-after-targets")
            .setParallelism(1);

    SingleOutputStreamOperator<ShardReply> replies =
        shardInputs
            .keyBy(in -> in.shardKey, org.apache.flink.api.common.typeinfo.Types.INT)
            .connect(
                updates.keyBy(in -> in.shardKey, org.apache.flink.api.common.typeinfo.Types.INT))
            .process(new ShardIndexFunction(ShardSettings.of(config), shardKeys))
            .name("shard-index")
            .uid("shard-index")
            .setParallelism(config.parallelism);
    SingleOutputStreamOperator<MergedBatch> merged =
        replies
            .keyBy(r -> r.batchId, org.apache.flink.api.common.typeinfo.Types.LONG)
            .process(
                new NegativeMerge(
                    config.shards,
                    config.hardNegativesPerStep() > 0 ? config.minedPerExample() : 0,
                    config.rescoresCandidates(),
                    config.negativesMode(),
                    config.uniformDrawsPerStep(),
                    config.seed))
            .name("negative-merge")
            .uid("negative-merge")
            .setParallelism(config.parallelism);
    SingleOutputStreamOperator<TrainingMetrics> metrics =
        merged
            .transform(
                "trainer",
                new AvroTypeInfo<>(TrainingMetrics.class),
                new TrainerOperator(
                    OperatorSettings.trainer(config),
                    config.faultDrillFile.isBlank()
                        ? faults
                        : FileTriggeredFault.andThen(config.faultDrillFile, faults)))
            .uid("trainer")
            .setParallelism(1);

    metrics
        .sinkTo(
            sink(
                config,
                config.metricsTopic(),
                TrainingMetrics.class,
                "metrics",
                DeliveryGuarantee.EXACTLY_ONCE))
        .name("metrics-sink")
        .uid("metrics-sink")
        .setParallelism(1)
        .disableChaining();
    metrics
        .getSideOutput(TrainerFunction.MODEL_UPDATES)
        .sinkTo(
            sink(
                config,
                config.modelUpdatesTopic(),
                ModelUpdate.class,
                "model-updates",
                DeliveryGuarantee.AT_LEAST_ONCE))
        .name("model-updates-sink")
        .uid("model-updates-sink")
        .setParallelism(1)
        .disableChaining();
    if (config.miningLead > 0) {
      metrics
          .getSideOutput(TrainerFunction.PROGRESS)
          .sinkTo(
              sink(
                  config,
                  config.progressTopic(),
                  TrainerProgress.class,
                  "progress",
                  DeliveryGuarantee.AT_LEAST_ONCE))
          .name("progress-sink")
          .uid("progress-sink")
          .setParallelism(1)
          .disableChaining();
    }
    deadLetters.add(pairs.getSideOutput(DeadLetters.TAG));
    deadLetters.add(updates.getSideOutput(DeadLetters.TAG));
    deadLetters.add(replies.getSideOutput(DeadLetters.TAG));
    deadLetters.add(metrics.getSideOutput(DeadLetters.TAG));
    targets
        .getSideOutput(DeadLetters.TAG)
        .union(deadLetters.toArray(new DataStream[0]))
        .sinkTo(
            sink(
                config,
                config.deadLettersTopic(),
                DeadLetter.class,
                "dead-letters",
                DeliveryGuarantee.EXACTLY_ONCE))
        .name("dead-letters-sink")
        .uid("dead-letters-sink")
        .setParallelism(1);
  }

  private static KafkaSource<KafkaRecord> source(
      TrainingJobConfig config, String topic, OffsetsInitializer start) {
    return KafkaSource.<KafkaRecord>builder()
        .setProperties(config.clientProperties())
        .setBootstrapServers(config.bootstrapServers)
        .setTopics(topic)
        .setGroupId(config.groupId)
        .setStartingOffsets(start)
        .setDeserializer(new RawKafkaDeserializer())
        .setProperty(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed")
        .build();
  }

  private static <T extends SpecificRecordBase> KafkaSink<T> sink(
      TrainingJobConfig config,
      String topic,
      Class<T> type,
      String name,
      DeliveryGuarantee guarantee) {
    Properties producer = config.clientProperties();
    producer.put(
        ProducerConfig.TRANSACTION_TIMEOUT_CONFIG,
        String.valueOf(config.transactionTimeout().toMillis()));
    return KafkaSink.<T>builder()
        .setBootstrapServers(config.bootstrapServers)
        .setRecordSerializer(
            KafkaRecordSerializationSchema.builder()
                .setTopic(topic)
                .setValueSerializationSchema(AvroValueSchema.of(type))
                .build())
        .setDeliveryGuarantee(guarantee)
        .setTransactionalIdPrefix(config.topicPrefix + config.groupId + "-" + name)
        .setKafkaProducerConfig(producer)
        .build();
  }
}
