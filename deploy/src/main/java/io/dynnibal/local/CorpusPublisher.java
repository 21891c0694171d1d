package io.dynnibal.local;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.schemas.SingleObjectCodec;
import io.dynnibal.schemas.Target;
import io.dynnibal.schemas.TrainingPair;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.IntConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Publishes a corpus as the job reads it: targets keyed by id (the topic is compacted, so the
 * latest text of an id wins and a null value deletes it), training pairs keyed by pair id, Avro
 * single-object encoding. The producer is idempotent with acks=all: a retried send is never
 * duplicated.
 */
public final class CorpusPublisher implements AutoCloseable {
  private final KafkaProducer<String, byte[]> producer;
  private final SingleObjectCodec<Target> targets = SingleObjectCodec.of(Target.class);
  private final SingleObjectCodec<TrainingPair> pairs = SingleObjectCodec.of(TrainingPair.class);

  public CorpusPublisher(Properties clientProperties) {
    Properties props = new Properties();
    props.putAll(clientProperties);
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.LINGER_MS_CONFIG, "20");
    props.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(256 * 1024));
    props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
    this.producer = new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer());
  }

  /**
   * Sends every target; returns after all are acknowledged, or throws if any send failed (a flush
   * alone does not: a target the broker refused, e.g. an idempotent batch out of sequence after a
   * timeout under load, was silently missing from the topic).
   */
  public void publishTargets(String topic, List<TargetText> corpus, IntConsumer progress) {
    sendAll(
        corpus,
        t -> {
          Target record = Target.newBuilder().setTargetId(t.targetId()).setText(t.text()).build();
          return new ProducerRecord<>(topic, t.targetId(), targets.encode(record));
        },
        progress);
  }

  /** A tombstone: the target leaves the index. */
  public void deleteTarget(String topic, String targetId) {
    await(producer.send(new ProducerRecord<>(topic, targetId, null)));
  }

  /**
   * Sends one pass over the pairs; pair ids are {@code <query_id>#<pass>} so that repeated passes
   * (epochs) stay distinct records.
   */
  public void publishPairs(
      String topic,
      List<LabelledQuery> queries,
      String pass,
      long eventTimeMs,
      IntConsumer progress) {
    sendAll(
        queries,
        q -> {
          String pairId = pairId(q, pass);
          TrainingPair pair =
              TrainingPair.newBuilder()
                  .setPairId(pairId)
                  .setQueryId(q.queryId())
                  .setQueryText(q.text())
                  .setTargetId(q.targetId())
                  .setEventTimeMs(eventTimeMs)
                  .build();
          return new ProducerRecord<>(topic, pairId, pairs.encode(pair));
        },
        progress);
  }

  /** The id of the pair of query {@code q} in pass {@code pass}. */
  public static String pairId(LabelledQuery q, String pass) {
    return q.queryId() + "#" + pass;
  }

  /**
   * Sends a record for each item, reporting the count every thousand and at the end, and returns
   * once the broker has acknowledged every one: a send that failed (the broker gone longer than the
   * delivery timeout) fails the whole call, instead of leaving a record counted as published that
   * never was.
   */
  private <T> void sendAll(
      List<T> items,
      java.util.function.Function<T, ProducerRecord<String, byte[]>> record,
      IntConsumer progress) {
    int sent = 0;
    List<Future<RecordMetadata>> sends = new ArrayList<>(items.size());
    for (T item : items) {
      sends.add(producer.send(record.apply(item)));
      if (++sent % 1000 == 0 && progress != null) {
        progress.accept(sent);
      }
    }
    producer.flush();
    sends.forEach(CorpusPublisher::await);
    if (progress != null) {
      progress.accept(sent);
    }
  }

  /** Raw bytes (tests of bad input use this). */
  public void publishRaw(String topic, String key, byte[] value) {
    await(producer.send(new ProducerRecord<>(topic, key, value)));
  }

  private static void await(Future<RecordMetadata> send) {
    try {
      send.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while publishing", e);
    } catch (ExecutionException e) {
      throw new IllegalStateException(
          "publishing failed: " + e.getCause().getMessage(), e.getCause());
    }
  }

  @Override
  public void close() {
    producer.close();
  }
}
