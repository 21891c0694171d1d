package io.dynnibal.jobs.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.schemas.SingleObjectCodec;
import io.dynnibal.schemas.TrainerProgress;
import io.dynnibal.stream.DeadLetters;
import io.dynnibal.stream.QueryBatch;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.util.function.ThrowingRunnable;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The pace with the trainer played by the mailbox: while the pace holds a batch it yields, and each
 * yield is the trainer taking one of the batches already let through (in a random order, as two
 * merge subtasks deliver them) and reporting it.
 */
class MiningPaceTest {

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 5})
  void theShardsNeverHoldMoreThanTheLeadBeyondTheLastBatchTaken(int lead) throws Exception {
    Random random = new Random(lead);
    MiningPace pace = new MiningPace(lead, null, null, 0);
    List<Long> inFlight = new ArrayList<>();
    AtomicLong taken = new AtomicLong(-1);
    Runnable trainerTakesOne =
        () -> {
          assertFalse(inFlight.isEmpty(), "the pace waits with nothing in flight: a deadlock");
          long took = inFlight.remove(random.nextInt(Math.min(2, inFlight.size())));
          taken.accumulateAndGet(took, Math::max);
          pace.reported(took);
        };
    TrainerMailbox mailbox = new TrainerMailbox(trainerTakesOne);
    try (var harness = harness(pace, mailbox)) {
      harness.open();
      for (long b = 0; b < 1_000; b++) {
        if (!inFlight.isEmpty() && random.nextInt(3) == 0) {
          trainerTakesOne.run(); // a trainer faster than the shards
        }
        harness.processElement(new StreamRecord<>(batch(b)));
        assertTrue(b <= taken.get() + lead, "let " + b + " through, taken " + taken.get());
        inFlight.add(b);
      }
      assertEquals(1_000, harness.getOutput().size(), "every batch went out once");
      assertTrue(mailbox.yields > 300, "the pace held batches back " + mailbox.yields + " times");
    }
  }

  @Test
  void aBatchHeldAtACheckpointGoesFirstAfterTheRestore() throws Exception {
    MiningPace pace = new MiningPace(2, null, null, 0);
    OperatorSubtaskState[] snapshot = new OperatorSubtaskState[1];
    OneInputStreamOperatorTestHarness<QueryBatch, QueryBatch>[] running =
        new OneInputStreamOperatorTestHarness[1];
    TrainerMailbox snapshotting =
        new TrainerMailbox(
            () -> {
              try {
                snapshot[0] = running[0].snapshot(1, 1); // batch 2 is held
              } catch (Exception e) {
                throw new AssertionError(e);
              }
              pace.reported(0);
            });
    try (var harness = harness(pace, snapshotting)) {
      running[0] = harness;
      harness.open();
      for (long b = 0; b < 3; b++) {
        harness.processElement(new StreamRecord<>(batch(b)));
      }
      assertEquals(3, harness.getOutput().size());
    }

    MiningPace restored = new MiningPace(2, null, null, 0);
    TrainerMailbox mailbox = new TrainerMailbox(() -> restored.reported(1));
    try (var harness = new OneInputStreamOperatorTestHarness<>(restored)) {
      harness.initializeState(snapshot[0]);
      restored.setMailboxExecutor(mailbox); // after the harness set its own
      harness.open();
      assertEquals(List.of(2L), ids(harness), "the held batch is sent on restore");
      harness.processElement(new StreamRecord<>(batch(3)));
      assertEquals(1, mailbox.yields, "batch 3 waited for the trainer to take batch 1");
      assertEquals(List.of(2L, 3L), ids(harness));
    }
  }

  @Test
  void anUnreadableReportIsADeadLetter() throws Exception {
    MiningPace pace = new MiningPace(1, null, null, 0);
    try (var harness = harness(pace, new TrainerMailbox(() -> {}))) {
      harness.open();
      pace.read(new ConsumerRecord<>("progress", 0, 7, null, new byte[] {1, 2, 3}));
      byte[] good = SingleObjectCodec.of(TrainerProgress.class).encode(progress(4));
      pace.read(new ConsumerRecord<>("progress", 0, 8, null, good));
      assertEquals(1, harness.getSideOutput(DeadLetters.TAG).size());
      harness.processElement(new StreamRecord<>(batch(5)));
      assertEquals(1, harness.getOutput().size(), "the readable report let batch 5 pass");
    }
  }

  /**
   * A trainer whose reports never come (a reader that cannot reach Kafka: its polls still wake the
   * mailbox) slows the job, it does not stop it: the held batch goes once {@link
   * MiningPace#MAX_WAIT_MS} has passed, not before, and the next one waits again.
   */
  @Test
  void aBatchWhoseReportNeverComesGoesAfterTheLongestWait() throws Exception {
    MiningPace pace = new MiningPace(1, null, null, 0);
    AtomicLong now = new AtomicLong(1_000_000);
    long step = 7_000;
    TrainerMailbox silent =
        new TrainerMailbox(
            () -> {
              now.addAndGet(step); // a poll that found nothing, 7 s later
              assertTrue(now.get() < 1_000_000 + 3 * MiningPace.MAX_WAIT_MS, "never let through");
            });
    pace.useClock(now::get);
    try (var harness = harness(pace, silent)) {
      harness.open();
      harness.processElement(new StreamRecord<>(batch(0)));
      assertEquals(0, silent.yields, "batch 0 is within the lead of nothing taken");
      harness.processElement(new StreamRecord<>(batch(1)));
      long waits = MiningPace.MAX_WAIT_MS / step + 1; // the first check past the longest wait
      assertEquals(waits, silent.yields, "batch 1 waited the longest wait, no more, no less");
      harness.processElement(new StreamRecord<>(batch(2)));
      assertEquals(2 * waits, silent.yields, "batch 2 waited again: going on is no report");
      assertEquals(List.of(0L, 1L, 2L), ids(harness));
    }
  }

  @Test
  void aLeadOfZeroIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new MiningPace(0, null, null, 0));
  }

  /** A harness set up, with {@code mailbox} in place of the one it gives the operator. */
  private static OneInputStreamOperatorTestHarness<QueryBatch, QueryBatch> harness(
      MiningPace pace, TrainerMailbox mailbox) throws Exception {
    var harness = new OneInputStreamOperatorTestHarness<>(pace);
    harness.setup();
    pace.setMailboxExecutor(mailbox);
    return harness;
  }

  /** Runs mails at once; a yield is the trainer's move. */
  private static final class TrainerMailbox implements MailboxExecutor {
    private final Runnable onYield;
    int yields;

    TrainerMailbox(Runnable onYield) {
      this.onYield = onYield;
    }

    @Override
    public void execute(
        MailOptions options,
        ThrowingRunnable<? extends Exception> command,
        String description,
        Object... args) {
      try {
        command.run();
      } catch (Exception e) {
        throw new AssertionError(e);
      }
    }

    @Override
    public void yield() {
      yields++;
      onYield.run();
    }

    @Override
    public boolean tryYield() {
      this.yield();
      return true;
    }

    @Override
    public boolean shouldInterrupt() {
      return false;
    }
  }

  private static List<Long> ids(OneInputStreamOperatorTestHarness<QueryBatch, QueryBatch> h) {
    List<Long> ids = new ArrayList<>();
    for (Object o : h.getOutput()) {
      if (o instanceof StreamRecord<?> r) {
        ids.add(((QueryBatch) r.getValue()).batchId);
      }
    }
    return ids;
  }

  private static QueryBatch batch(long id) {
    QueryBatch b = new QueryBatch();
    b.batchId = id;
    b.pairIds = new String[0];
    b.queryTexts = new String[0];
    b.targetIds = new String[0];
    return b;
  }

  private static TrainerProgress progress(long batchId) {
    return new TrainerProgress(batchId, batchId + 1, 0L);
  }
}
