package io.dynnibal.tests.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.deploy.KafkaBroker;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.tests.harness.ListeningSockets;
import io.dynnibal.tests.harness.WorkDirs;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code dynnibal kafka start|status|stop}: a broker in a JVM of its own, found and stopped by its
 * PID file.
 */
class KafkaBrokerProcessTest {
  @Test
  @Timeout(180)
  void startsServesAndStopsByPid() throws Exception {
    Path dir = WorkDirs.fresh("kafka-process");
    int port = freePort();
    KafkaBroker.Status started = KafkaBroker.start(dir, port, freePort(), Duration.ofSeconds(90));
    try {
      assertTrue(started.serving());
      assertTrue(
          started.pid() != ProcessHandle.current().pid(), "the broker runs in its own process");
      assertThrows(
          IllegalStateException.class,
          () -> KafkaBroker.start(dir, port, freePort(), Duration.ofSeconds(5)));
      Properties client = new Properties();
      client.put("bootstrap.servers", started.bootstrap());
      try (Admin admin = Admin.create(client)) {
        admin.createTopics(java.util.List.of(new NewTopic("t", 1, (short) 1))).all().get();
      }
      client.put("key.serializer", StringSerializer.class.getName());
      client.put("value.serializer", StringSerializer.class.getName());
      try (KafkaProducer<String, String> producer = new KafkaProducer<>(client)) {
        producer.send(new ProducerRecord<>("t", "k", "v")).get();
      }
      assertEquals(1L, TopicReader.endOffsets(client, "t").get(0));
      assertEquals(started.pid(), KafkaBroker.status(dir).pid());
      Set<InetSocketAddress> listening = ListeningSockets.of(started.pid());
      assertTrue(listening.size() >= 2, "the broker and its controller listen: " + listening);
      assertEquals(
          List.of(), ListeningSockets.beyondLoopback(listening), "listening: " + listening);
    } finally {
      assertTrue(KafkaBroker.stop(dir, Duration.ofSeconds(60)));
    }
    assertFalse(
        ProcessHandle.of(started.pid()).map(ProcessHandle::isAlive).orElse(false),
        "the process is gone");
    KafkaBroker.Status after = KafkaBroker.status(dir);
    assertFalse(after.running());
    assertFalse(Files.exists(dir.resolve("broker.pid")));
    assertFalse(
        KafkaBroker.stop(dir, Duration.ofSeconds(5)), "stopping twice finds nothing to stop");
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
