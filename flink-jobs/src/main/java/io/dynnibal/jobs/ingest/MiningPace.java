package io.dynnibal.jobs.ingest;

import io.dynnibal.schemas.AvroTrust;
import io.dynnibal.schemas.RecordDecodingException;
import io.dynnibal.schemas.SingleObjectCodec;
import io.dynnibal.schemas.TrainerProgress;
import io.dynnibal.stream.DeadLetters;
import io.dynnibal.stream.KafkaRecord;
import io.dynnibal.stream.QueryBatch;
import java.util.Iterator;
import java.util.List;
import java.util.Properties;
import java.util.function.LongSupplier;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.YieldingOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lets query batch b through to the shards only once the trainer has taken batch b - lead (batches
 * 0 to lead - 1 at once): the shards never mine more than {@code lead} batches ahead of the
 * trainer, so a model update is sampled with from about the lead-th batch after it on. Without it
 * the sources fill every buffer on the way and a model update waits behind all of them.
 *
 * <p>The trainer reports each batch it takes on the progress topic ({@link TrainerProgress}), read
 * here by a {@link ProgressReader} thread whose records arrive as mails. A batch that may not pass
 * yet is held in {@link #processElement}, which yields to the mailbox until the trainer's report
 * lets it go: the input is not read meanwhile, so the batches behind it wait upstream and in Kafka
 * (backpressure). The progress is not a second Flink input because an operator cannot stop reading
 * one input while it reads the other under checkpointing (Flink refuses {@code InputSelectable}
 * operators in checkpointed jobs).
 *
 * <p>Exactly once: a checkpoint taken while a batch is held stores it, and a restored pace sends it
 * first. Liveness: every batch let through reaches the trainer, which reports every batch it takes
 * (trained, skipped or refused), so the report that lets the next batch go always comes. After a
 * restore the reader starts a minute before this operator's snapshot, so reports the trainer made
 * before its own checkpoint are read again; reports of a branch the restore discarded only let a
 * few batches through early. If none comes for {@link #MAX_WAIT_MS} (a reader that cannot reach
 * Kafka), the batch goes anyway, with a log line.
 */
public final class MiningPace extends AbstractStreamOperator<QueryBatch>
    implements OneInputStreamOperator<QueryBatch, QueryBatch>, YieldingOperator<QueryBatch> {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(MiningPace.class);
  static final String STAGE = "mining-pace";

  /** The longest a batch waits for a report before it goes anyway. */
  static final long MAX_WAIT_MS = 60_000;

  /** After a restore, reports are read again from this long before the snapshot. */
  static final long REREAD_MS = 60_000;

  private final int lead;
  private final String topic;
  private final Properties client;
  private final long builtAtMs;

  private transient MailboxExecutor mailbox;
  private transient SingleObjectCodec<TrainerProgress> codec;
  private transient ProgressReader reader;

  /** The highest batch number the trainer reported taking, -1 before the first. */
  private transient long taken;

  /** The batch {@link #processElement} holds, or null. */
  private transient QueryBatch held;

  private transient volatile boolean waiting;

  /**
   * Wall-clock milliseconds, set in {@link #initializeState} (a transient field's initializer does
   * not run in the deserialized operator); a test's own clock in tests of the fallback.
   */
  private transient LongSupplier clock;

  private transient long readFromMs;
  private transient ListState<Long> takenState; // {taken, snapshot time}
  private transient ListState<QueryBatch> heldState;

  /**
   * @param lead batches the shards may have beyond the last one the trainer took (at least 1)
   * @param topic the progress topic; null in tests, which report with {@link #reported}
   * @param client the Kafka client properties
   * @param builtAtMs when the job's graph was built: a fresh job reads reports from then on
   */
  public MiningPace(int lead, String topic, Properties client, long builtAtMs) {
    if (lead < 1) {
      throw new IllegalArgumentException("the mining lead must be at least 1, got " + lead);
    }
    this.lead = lead;
    this.topic = topic;
    this.client = client;
    this.builtAtMs = builtAtMs;
  }

  @Override
  public void setMailboxExecutor(MailboxExecutor mailboxExecutor) {
    this.mailbox = mailboxExecutor;
  }

  @Override
  public void processElement(StreamRecord<QueryBatch> record) throws Exception {
    QueryBatch batch = record.getValue();
    if (batch.batchId > taken + lead) {
      held = batch;
      waiting = true;
      long since = clock.getAsLong();
      while (batch.batchId > taken + lead) {
        if (clock.getAsLong() - since > MAX_WAIT_MS) {
          LOG.info(
              "batch {} waited {} s for the trainer to take batch {} (its last report: batch {}):"
                  + " sending it on",
              batch.batchId,
              MAX_WAIT_MS / 1000,
              batch.batchId - lead,
              taken);
          break;
        }
        mailbox.yield();
      }
      waiting = false;
      held = null;
    }
    output.collect(record);
  }

  /** Replaces the wall clock (tests of the fallback after {@link #MAX_WAIT_MS}). */
  void useClock(LongSupplier clock) {
    this.clock = clock;
  }

  /** The trainer reported taking batch {@code batchId}. */
  void reported(long batchId) {
    taken = Math.max(taken, batchId);
  }

  /** One record of the progress topic, in the mailbox thread. */
  void read(ConsumerRecord<byte[], byte[]> r) {
    KafkaRecord record =
        new KafkaRecord(r.topic(), r.partition(), r.offset(), r.key(), r.value(), r.timestamp());
    try {
      if (record.value == null) {
        throw new IllegalArgumentException("the progress topic holds a null value");
      }
      reported(codec.decode(record.value).getBatchId());
    } catch (RecordDecodingException | IllegalArgumentException e) {
      output.collect(DeadLetters.TAG, new StreamRecord<>(DeadLetters.of(record, e, STAGE)));
    }
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    takenState =
        context
            .getOperatorStateStore()
            .getListState(new ListStateDescriptor<>("taken", Types.LONG));
    heldState =
        context
            .getOperatorStateStore()
            .getListState(new ListStateDescriptor<>("held", TypeInformation.of(QueryBatch.class)));
    if (clock == null) {
      clock = System::currentTimeMillis;
    }
    taken = -1;
    readFromMs = builtAtMs;
    Iterator<Long> saved = takenState.get().iterator();
    if (saved.hasNext()) {
      taken = saved.next();
      readFromMs = saved.next() - REREAD_MS;
    }
    for (QueryBatch b : heldState.get()) {
      held = b;
    }
  }

  @Override
  public void open() throws Exception {
    super.open();
    if (held != null) {
      // Read before the checkpoint and never sent: it goes first, ahead of the input.
      QueryBatch restored = held;
      held = null;
      mailbox.execute(() -> output.collect(new StreamRecord<>(restored)), "restored batch");
    }
    AvroTrust.install();
    codec = SingleObjectCodec.of(TrainerProgress.class);
    if (topic != null) {
      reader =
          new ProgressReader(
              client,
              topic,
              readFromMs,
              r -> mailbox.execute(() -> read(r), "trainer progress"),
              () -> {
                if (waiting) {
                  mailbox.execute(() -> {}, "look at the clock");
                }
              });
      reader.start();
    }
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    takenState.update(List.of(taken, clock.getAsLong()));
    heldState.update(held == null ? List.of() : List.of(held));
  }

  @Override
  public void close() throws Exception {
    if (reader != null) {
      reader.close();
      reader = null;
    }
    super.close();
  }
}
