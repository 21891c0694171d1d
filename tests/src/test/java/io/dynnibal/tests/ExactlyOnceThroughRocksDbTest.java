package io.dynnibal.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.dynnibal.jobs.kafka.AvroValueSchema;
import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.schemas.SingleObjectCodec;
import io.dynnibal.schemas.TrainingPair;
import io.dynnibal.state.RocksDbCheckpointing;
import io.dynnibal.tests.harness.StreamingClusterExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The foundation's promise end to end, on real components: Avro pairs on a Kafka topic, a Flink job
 * that keeps keyed state in RocksDB with incremental checkpoints, an exactly-once Kafka sink. The
 * job counts pairs per target (keyed state) and emits each pair with its running count. A task
 * fails mid-stream once; after the restore every pair still comes out exactly once, and each
 * target's counts are exactly 1..n: state neither lost nor double-counted.
 */
class ExactlyOnceThroughRocksDbTest {
  @RegisterExtension
  static final StreamingClusterExtension CLUSTER = StreamingClusterExtension.withTaskManagers(1, 2);

  private static final int PAIRS = 2_000;
  private static final int TARGETS = 97;
  private static final String FAILING_PAIR = pairId(PAIRS * 3 / 4);

  /** Shared by the job's tasks: they run in this JVM. Set once the failure has been injected. */
  private static final AtomicBoolean FAILED = new AtomicBoolean();

  @Test
  void everyPairArrivesExactlyOnceAcrossATaskFailure(EmbeddedKafkaBroker kafka) throws Exception {
    kafka.createTopic("pairs", 2);
    kafka.createTopic("pairs-seen", 2);
    Path checkpoints = Files.createDirectories(CLUSTER.workDir().resolve("checkpoints"));

    Configuration conf =
        RocksDbCheckpointing.apply(
            new Configuration(), checkpoints.toUri(), Duration.ofMillis(300));
    // Upload every state file, however small, so the checkpoint directory shows what the backend
    // wrote.
    conf.set(CheckpointingOptions.FS_SMALL_FILE_THRESHOLD, MemorySize.ZERO);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(200));
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    env.fromSource(pairSource(kafka), WatermarkStrategy.noWatermarks(), "pairs")
        .keyBy(TrainingPair::getTargetId)
        .process(new CountPairsPerTarget())
        .sinkTo(exactlyOnceSink(kafka));

    try (KafkaConsumer<String, String> consumer = committedConsumer(kafka)) {
      consumer.subscribe(List.of("pairs-seen"));
      publish(kafka, 0, PAIRS / 2);
      JobClient job = env.executeAsync("exactly-once through RocksDB");
      boolean passed = false;
      try {
        // The first half comes out only after a checkpoint committed the sink's transaction; the
        // failure is injected in the second half, so the restore starts from a real checkpoint with
        // real state.
        Map<String, List<String>> seen = new HashMap<>();
        pollUntil(consumer, seen, PAIRS / 2, job);
        publish(kafka, PAIRS / 2, PAIRS);
        pollUntil(consumer, seen, PAIRS, job);
        pollFor(
            consumer, seen, Duration.ofSeconds(2)); // duplicates would come in a later transaction

        assertTrue(FAILED.get(), "the injected failure never happened");
        assertEquals(expectedIds(), new TreeSet<>(seen.keySet()));
        List<String> repeated =
            seen.entrySet().stream()
                .filter(e -> e.getValue().size() != 1)
                .map(Map.Entry::toString)
                .toList();
        assertEquals(List.of(), repeated, "pairs emitted more than once");
        Map<String, List<Integer>> countsByTarget = new TreeMap<>();
        seen.forEach(
            (pair, counts) ->
                countsByTarget
                    .computeIfAbsent(targetOf(pair), t -> new ArrayList<>())
                    .add(Integer.parseInt(counts.get(0))));
        countsByTarget.forEach(
            (target, counts) -> {
              Collections.sort(counts);
              assertEquals(
                  IntStream.rangeClosed(1, counts.size()).boxed().toList(),
                  counts,
                  "running counts of "
                      + target
                      + " (state lost or counted twice across the restore)");
            });
        passed = true;
      } finally {
        if (!job.getJobStatus().get().isGloballyTerminalState()) {
          job.cancel().get();
        } else if (passed) {
          fail("the job ended by itself: " + job.getJobStatus().get());
        }
      }
      assertRocksDbIncrementalCheckpoint(checkpoints);
    }
  }

  /**
   * Incremental RocksDB checkpoints upload the SST files of the keyed state into the checkpoint's
   * shared directory; the heap backend writes none. An SST file ends with RocksDB's block-based
   * table magic number. This is what makes the test fail if the job silently ran without RocksDB.
   */
  private static void assertRocksDbIncrementalCheckpoint(Path checkpoints) throws Exception {
    byte[] magic = {
      (byte) 0xf7,
      (byte) 0xcf,
      (byte) 0xf4,
      (byte) 0x85,
      (byte) 0xb7,
      0x41,
      (byte) 0xe2,
      (byte) 0x88
    };
    try (Stream<Path> files = Files.walk(checkpoints)) {
      List<Path> sstFiles =
          files
              .filter(Files::isRegularFile)
              .filter(p -> p.getParent().getFileName().toString().equals("shared"))
              .filter(p -> endsWith(p, magic))
              .toList();
      assertFalse(sstFiles.isEmpty(), "no RocksDB SST file under " + checkpoints + "/<job>/shared");
    }
  }

  /**
   * Whether {@code file} ends with {@code suffix}; false for a file gone since the walk listed it
   * (Flink deletes a subsumed checkpoint's shared files while the cancelled job shuts down).
   */
  private static boolean endsWith(Path file, byte[] suffix) {
    try {
      byte[] bytes = Files.readAllBytes(file);
      return bytes.length >= suffix.length
          && Arrays.equals(
              bytes, bytes.length - suffix.length, bytes.length, suffix, 0, suffix.length);
    } catch (java.nio.file.NoSuchFileException e) {
      return false;
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * Counts pairs per target (RocksDB keyed state), emits each pair with the running count, fails
   * once mid-stream.
   */
  static final class CountPairsPerTarget
      extends KeyedProcessFunction<String, TrainingPair, String> {
    private transient ValueState<Integer> pairsSoFar;

    @Override
    public void open(org.apache.flink.api.common.functions.OpenContext openContext) {
      pairsSoFar =
          getRuntimeContext().getState(new ValueStateDescriptor<>("pairs-so-far", Types.INT));
    }

    @Override
    public void processElement(TrainingPair pair, Context ctx, Collector<String> out)
        throws Exception {
      if (pair.getPairId().equals(FAILING_PAIR) && FAILED.compareAndSet(false, true)) {
        throw new IllegalStateException("injected failure at " + FAILING_PAIR);
      }
      Integer before = pairsSoFar.value();
      int now = before == null ? 1 : before + 1;
      pairsSoFar.update(now);
      out.collect(pair.getPairId() + "\t" + now);
    }
  }

  private static KafkaSource<TrainingPair> pairSource(EmbeddedKafkaBroker kafka) {
    return KafkaSource.<TrainingPair>builder()
        .setBootstrapServers(kafka.bootstrapServers())
        .setTopics("pairs")
        .setGroupId("exactly-once-test")
        .setStartingOffsets(OffsetsInitializer.earliest())
        .setValueOnlyDeserializer(AvroValueSchema.of(TrainingPair.class))
        .build();
  }

  private static KafkaSink<String> exactlyOnceSink(EmbeddedKafkaBroker kafka) {
    return KafkaSink.<String>builder()
        .setBootstrapServers(kafka.bootstrapServers())
        .setRecordSerializer(
            KafkaRecordSerializationSchema.builder()
                .setTopic("pairs-seen")
                .setValueSerializationSchema(new SimpleStringSchema())
                .build())
        .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
        .setTransactionalIdPrefix("exactly-once-test")
        .setProperty(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "600000")
        .build();
  }

  private static void publish(EmbeddedKafkaBroker kafka, int from, int to) {
    Properties props = kafka.clientProperties();
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    SingleObjectCodec<TrainingPair> codec = SingleObjectCodec.of(TrainingPair.class);
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer())) {
      for (int i = from; i < to; i++) {
        TrainingPair pair =
            TrainingPair.newBuilder()
                .setPairId(pairId(i))
                .setQueryId("q:" + i)
                .setQueryText("query number " + i)
                .setTargetId(targetOf(pairId(i)))
                .setEventTimeMs(1_764_000_000_000L + i)
                .build();
        producer.send(new ProducerRecord<>("pairs", pair.getPairId(), codec.encode(pair)));
      }
      producer.flush();
    }
  }

  private static KafkaConsumer<String, String> committedConsumer(EmbeddedKafkaBroker kafka) {
    Properties props = kafka.clientProperties();
    props.put(ConsumerConfig.GROUP_ID_CONFIG, "verifier");
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
  }

  private static void pollUntil(
      KafkaConsumer<String, String> consumer,
      Map<String, List<String>> seen,
      int records,
      JobClient job)
      throws Exception {
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    while (count(seen) < records) {
      if (job.getJobStatus().get().isGloballyTerminalState()) {
        job.getJobExecutionResult().get(); // throws the job's failure
        fail("the job ended before " + records + " records arrived");
      }
      if (System.nanoTime() > deadline) {
        fail("only " + count(seen) + " of " + records + " committed records arrived");
      }
      pollFor(consumer, seen, Duration.ofMillis(200));
    }
  }

  private static void pollFor(
      KafkaConsumer<String, String> consumer, Map<String, List<String>> seen, Duration time) {
    long deadline = System.nanoTime() + time.toNanos();
    do {
      for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
        String[] idAndCount = record.value().split("\t");
        seen.computeIfAbsent(idAndCount[0], id -> new ArrayList<>()).add(idAndCount[1]);
      }
    } while (System.nanoTime() < deadline);
  }

  private static int count(Map<String, List<String>> seen) {
    return seen.values().stream().mapToInt(List::size).sum();
  }

  private static Set<String> expectedIds() {
    return IntStream.range(0, PAIRS)
        .mapToObj(ExactlyOnceThroughRocksDbTest::pairId)
        .collect(Collectors.toCollection(TreeSet::new));
  }

  private static String pairId(int i) {
    return String.format("pair-%05d", i);
  }

  private static String targetOf(String pairId) {
    return "target-" + Integer.parseInt(pairId.substring("pair-".length())) % TARGETS;
  }
}
