package io.dynnibal.jobs.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dynnibal.jobs.shard.ShardInput;
import io.dynnibal.stream.QueryBatch;
import java.time.Duration;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.co.KeyedCoProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * Batches wait behind the targets that were on the topic at the start, with processing time in the
 * test's hands: the wait for a marker that never comes counts from the last target, so slow
 * indexing (targets trickling through for longer than the wait) never releases batches early.
 */
class PairsAfterTargetsTest {
  private static final Duration WAIT = Duration.ofSeconds(1);

  @Test
  void batchesWaitWhileTargetsKeepComingForLongerThanTheWait() throws Exception {
    try (var harness = harness()) {
      harness.setProcessingTime(0);
      harness.processElement2(new StreamRecord<>(batch(1)));
      for (long t = 400; t <= 2800; t += 400) {
        harness.setProcessingTime(t);
        harness.processElement1(new StreamRecord<>(ShardInput.upsert(0, "t" + t, "text")));
      }
      harness.setProcessingTime(3700);
      assertEquals(0, batchesOut(harness), "targets came 900 ms ago: still waiting");
      harness.processElement1(new StreamRecord<>(ShardInput.targetsLoaded()));
      harness.setProcessingTime(3702);
      assertEquals(2, batchesOut(harness), "released to both shards after the marker");
    }
  }

  @Test
  void batchesGoOnceTargetsStopWithoutAMarker() throws Exception {
    try (var harness = harness()) {
      harness.setProcessingTime(0);
      harness.processElement2(new StreamRecord<>(batch(1)));
      harness.setProcessingTime(500);
      harness.processElement1(new StreamRecord<>(ShardInput.upsert(0, "a", "text")));
      harness.setProcessingTime(1000);
      assertEquals(0, batchesOut(harness), "500 ms since the last target");
      harness.setProcessingTime(1600);
      assertEquals(2, batchesOut(harness), "a wait without targets releases them");
    }
  }

  @Test
  void heldBatchesWaitForRoomInTheOutput() throws Exception {
    java.util.concurrent.atomic.AtomicBoolean room =
        new java.util.concurrent.atomic.AtomicBoolean();
    PairsAfterTargets function = function();
    function.whenOutputAvailable(room::get);
    try (var harness = harness(function)) {
      harness.setProcessingTime(0);
      harness.processElement2(new StreamRecord<>(batch(1)));
      harness.processElement2(new StreamRecord<>(batch(2)));
      harness.processElement1(new StreamRecord<>(ShardInput.targetsLoaded()));
      harness.setProcessingTime(100);
      assertEquals(0, batchesOut(harness), "a full output: a timer that released would block");
      room.set(true);
      harness.setProcessingTime(200);
      assertEquals(4, batchesOut(harness), "both batches to both shards once there is room");
    }
  }

  private static PairsAfterTargets function() {
    return new PairsAfterTargets("targets", WAIT, new int[] {0, 1}, Map.of(0, 5L));
  }

  private static KeyedTwoInputStreamOperatorTestHarness<Integer, ShardInput, QueryBatch, ShardInput>
      harness() throws Exception {
    return harness(function());
  }

  private static KeyedTwoInputStreamOperatorTestHarness<Integer, ShardInput, QueryBatch, ShardInput>
      harness(PairsAfterTargets function) throws Exception {
    var harness =
        new KeyedTwoInputStreamOperatorTestHarness<>(
            new KeyedCoProcessOperator<>(function),
            (ShardInput in) -> 0,
            (QueryBatch b) -> 0,
            Types.INT);
    harness.open();
    return harness;
  }

  private static long batchesOut(
      KeyedTwoInputStreamOperatorTestHarness<Integer, ShardInput, QueryBatch, ShardInput> harness) {
    return harness.extractOutputValues().stream()
        .filter(in -> in.kind == ShardInput.QUERIES)
        .count();
  }

  private static QueryBatch batch(long id) {
    QueryBatch batch = new QueryBatch();
    batch.batchId = id;
    batch.pairIds = new String[] {"p" + id};
    batch.queryTexts = new String[] {"q"};
    batch.targetIds = new String[] {"a"};
    return batch;
  }
}
