package io.dynnibal.jobs.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** Which source failures are a loss, and what the loss's message says. */
class LossCheckedReaderTest {
  @Test
  void anOutOfRangeFetchIsALossNamingPartitionOffsetAndRemedy() {
    OffsetOutOfRangeException outOfRange =
        new OffsetOutOfRangeException(Map.of(new TopicPartition("x.pairs", 1), 42L));
    // As the source reader reports a fetcher's failure.
    RuntimeException fetcher =
        new RuntimeException("One or more fetchers have encountered exception", outOfRange);
    DataLossException loss = LossCheckedReader.explained(fetcher, "longer retention").orElseThrow();
    assertTrue(
        loss.getMessage().contains("x.pairs-1=42")
            && loss.getMessage().contains(DataLossException.ACCEPT)
            && loss.getMessage().endsWith("longer retention"),
        loss.getMessage());
    assertSame(outOfRange, loss.getCause());
  }

  @Test
  void otherFailuresAreNotALoss() {
    assertEquals(
        Optional.empty(),
        LossCheckedReader.explained(new IllegalStateException("broker gone"), "r"));
  }
}
