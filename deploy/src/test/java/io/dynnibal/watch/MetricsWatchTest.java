package io.dynnibal.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.schemas.SingleObjectCodec;
import io.dynnibal.schemas.TrainingMetrics;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code watch} on a metrics topic that two runs wrote to, on a real (in-process) broker. */
class MetricsWatchTest {
  private static final String TOPIC = "w.metrics";
  @TempDir static Path dir;
  private static EmbeddedKafkaBroker kafka;

  @BeforeAll
  static void twoRuns() throws Exception {
    kafka = EmbeddedKafkaBroker.start(dir.resolve("kafka"));
    try (Admin admin = Admin.create(kafka.clientProperties())) {
      admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
    }
    SingleObjectCodec<TrainingMetrics> codec = SingleObjectCodec.of(TrainingMetrics.class);
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(
            kafka.clientProperties(), new StringSerializer(), new ByteArraySerializer())) {
      for (int step = 1; step <= 5; step++) {
        producer.send(new ProducerRecord<>(TOPIC, codec.encode(report("older", step)))).get();
      }
      for (int step = 1; step <= 3; step++) {
        producer.send(new ProducerRecord<>(TOPIC, codec.encode(report("newer", step)))).get();
      }
    }
  }

  @AfterAll
  static void stop() {
    kafka.close();
  }

  private static TrainingMetrics report(String run, long step) {
    return TrainingMetrics.newBuilder()
        .setStep(step)
        .setModelVersion(0)
        .setTimeMs(step)
        .setSampler("uniform")
        .setLoss(1.0 / step)
        .setLearningRate(1e-3)
        .setStepsPerSecond(2)
        .setRunId(run)
        .build();
  }

  private static List<TrainingMetrics> watch(
      MetricsWatch.Runs runs, boolean fromEnd, PrintStream out) throws Exception {
    List<TrainingMetrics> shown = new ArrayList<>();
    Properties client = kafka.clientProperties();
    MetricsWatch.follow(
        client,
        TOPIC,
        MetricsWatch.Following.until(0, Duration.ofSeconds(3))
            .runs(runs, fromEnd)
            .onReport(shown::add),
        out);
    return shown;
  }

  @Test
  void byDefaultOnlyTheLatestRunIsShown() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    List<TrainingMetrics> shown =
        watch(MetricsWatch.Runs.LATEST, true, new PrintStream(bytes, true, StandardCharsets.UTF_8));
    assertEquals(
        List.of("newer", "newer", "newer"), shown.stream().map(MetricsWatch::runOf).toList());
    String view = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(view.contains("run newer") && !view.contains("older"), view);
  }

  @Test
  void oneRunOrAllFromTheBeginning() throws Exception {
    List<TrainingMetrics> older = watch(MetricsWatch.Runs.only("older"), false, null);
    assertEquals(
        List.of(1L, 2L, 3L, 4L, 5L), older.stream().map(TrainingMetrics::getStep).toList());
    assertEquals(8, watch(MetricsWatch.Runs.ALL, false, null).size());
    assertEquals(
        Map.of("older", 5L, "newer", 3L),
        Map.of(
            "older",
            (long) older.size(),
            "newer",
            (long) watch(MetricsWatch.Runs.only("newer"), false, null).size()));
  }
}
