package io.dynnibal.jobs.ingest;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A thread that reads the progress topic (one partition) from a point in time on and hands every
 * record to {@code onRecord}, then calls {@code onPoll} after every poll (about every 100 ms). No
 * consumer group, no committed offsets: where to start is the caller's to say. A failing consumer
 * is closed and opened again after a second, from the record after the last one handed on.
 */
public final class ProgressReader implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ProgressReader.class);
  private static final Duration POLL = Duration.ofMillis(100);

  private final Properties client;
  private final TopicPartition partition;
  private final long fromMs;
  private final Consumer<ConsumerRecord<byte[], byte[]>> onRecord;
  private final Runnable onPoll;
  private final Thread thread;
  private volatile boolean running = true;
  private volatile KafkaConsumer<byte[], byte[]> consumer;
  private long nextOffset = -1;

  public ProgressReader(
      Properties client,
      String topic,
      long fromMs,
      Consumer<ConsumerRecord<byte[], byte[]>> onRecord,
      Runnable onPoll) {
    this.client = client;
    this.partition = new TopicPartition(topic, 0);
    this.fromMs = fromMs;
    this.onRecord = onRecord;
    this.onPoll = onPoll;
    this.thread = new Thread(this::run, "progress-reader " + topic);
    thread.setDaemon(true);
  }

  public void start() {
    thread.start();
  }

  private void run() {
    while (running) {
      try (KafkaConsumer<byte[], byte[]> c = open()) {
        consumer = c;
        while (running) {
          for (ConsumerRecord<byte[], byte[]> r : c.poll(POLL)) {
            onRecord.accept(r);
            nextOffset = r.offset() + 1;
          }
          onPoll.run();
        }
      } catch (WakeupException e) {
        return; // closed
      } catch (RuntimeException e) {
        if (!running) {
          return;
        }
        LOG.warn("reading {} failed, again in 1 s: {}", partition, e.toString());
        try {
          Thread.sleep(1000);
        } catch (InterruptedException interrupted) {
          return;
        }
      }
    }
  }

  private KafkaConsumer<byte[], byte[]> open() {
    Properties p = new Properties();
    p.putAll(client);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.remove(ConsumerConfig.GROUP_ID_CONFIG);
    KafkaConsumer<byte[], byte[]> c =
        new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    c.assign(List.of(partition));
    if (nextOffset >= 0) {
      c.seek(partition, nextOffset);
    } else {
      Map<TopicPartition, OffsetAndTimestamp> at = c.offsetsForTimes(Map.of(partition, fromMs));
      OffsetAndTimestamp first = at.get(partition);
      if (first == null) {
        c.seekToEnd(List.of(partition));
      } else {
        c.seek(partition, first.offset());
      }
    }
    return c;
  }

  @Override
  public void close() throws InterruptedException {
    running = false;
    KafkaConsumer<byte[], byte[]> c = consumer;
    if (c != null) {
      c.wakeup();
    }
    thread.join(10_000);
  }
}
