package io.dynnibal.tests.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.jobs.ingest.ProgressReader;
import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.tests.harness.WorkDirs;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The pace's reader on a real broker: it starts at a point in time (what a restored pace relies on
 * to read again the reports made before the trainer's checkpoint) and hands on every later record,
 * in order, including those published while it runs.
 */
class ProgressReaderTest {
  @Test
  @Timeout(120)
  void readsEveryRecordFromItsStartTimeOnAndThoseThatComeLater() throws Exception {
    Path work = WorkDirs.fresh("progress-reader");
    try (EmbeddedKafkaBroker kafka = EmbeddedKafkaBroker.start(work.resolve("kafka"))) {
      kafka.createTopics(List.of(new NewTopic("progress", 1, (short) 1)));
      Properties client = kafka.clientProperties();
      long t0 = System.currentTimeMillis() - 600_000;
      try (KafkaProducer<byte[], byte[]> producer =
          new KafkaProducer<>(client, new ByteArraySerializer(), new ByteArraySerializer())) {
        for (int i = 0; i < 10; i++) { // a minute apart, ten minutes ago
          producer.send(
              new ProducerRecord<>("progress", 0, t0 + i * 60_000L, null, new byte[] {(byte) i}));
        }
        producer.flush();
        List<Integer> read = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger polls = new AtomicInteger();
        try (ProgressReader reader =
            new ProgressReader(
                client,
                "progress",
                t0 + 4 * 60_000L,
                r -> read.add((int) r.value()[0]),
                polls::incrementAndGet)) {
          reader.start();
          producer.send(new ProducerRecord<>("progress", 0, null, null, new byte[] {10}));
          producer.flush();
          long deadline = System.nanoTime() + 60_000_000_000L;
          while (read.size() < 7 && System.nanoTime() < deadline) {
            Thread.sleep(50);
          }
          Thread.sleep(300); // nothing more may come
          assertEquals(List.of(4, 5, 6, 7, 8, 9, 10), read, "from the fifth record on, in order");
          assertTrue(polls.get() > 0, "the caller hears of every poll");
        }
      }
    }
  }
}
