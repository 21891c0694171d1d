package io.dynnibal.tests.training;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.data.TargetText;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.tests.harness.WorkDirs;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The publisher on a real broker: a target Kafka refuses fails the publish, it is not dropped. */
class CorpusPublisherTest {
  @Test
  @Timeout(120)
  void aTargetTheProducerCannotSendFailsThePublishInsteadOfVanishing() throws Exception {
    Path work = WorkDirs.fresh("corpus-publisher");
    try (EmbeddedKafkaBroker kafka = EmbeddedKafkaBroker.start(work.resolve("kafka"))) {
      kafka.createTopics(List.of(new NewTopic("targets", 1, (short) 1)));
      Properties client = kafka.clientProperties();
      // Requests of at most 2 kB: the 8 kB target's send fails, the small ones go through.
      client.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, "2048");
      List<TargetText> corpus =
          List.of(
              new TargetText("small-1", "a short description"),
              new TargetText("huge", "x".repeat(8 * 1024)),
              new TargetText("small-2", "another short description"));
      try (CorpusPublisher publisher = new CorpusPublisher(client)) {
        IllegalStateException failed =
            assertThrows(
                IllegalStateException.class,
                () -> publisher.publishTargets("targets", corpus, null));
        assertTrue(failed.getMessage().contains("publishing failed"), failed.getMessage());
      }
    }
  }
}
