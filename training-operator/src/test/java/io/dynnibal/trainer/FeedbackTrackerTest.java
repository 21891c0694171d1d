package io.dynnibal.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class FeedbackTrackerTest {
  private final AtomicLong clock = new AtomicLong(1_000);
  private final FeedbackTracker tracker = new FeedbackTracker(clock::get);

  @Test
  void latencyIsMeasuredFromEmissionToTheFirstBatchSampledWithIt() {
    assertNull(tracker.latencySteps());
    tracker.emitted(1, 100);
    clock.set(4_000);
    tracker.observed(0, 130); // shards still answer with version 0
    assertNull(tracker.latencySteps());
    tracker.observed(1, 140);
    assertEquals(40L, tracker.latencySteps());
    assertEquals(3_000.0, tracker.latencyMs());
    assertEquals(1, tracker.versionEverywhere());
    tracker.observed(1, 150); // the same version again changes nothing
    assertEquals(40L, tracker.latencySteps());
  }

  @Test
  void onlyTheNewestVersionsAreRemembered() {
    for (long v = 1; v <= FeedbackTracker.REMEMBERED + 10; v++) {
      tracker.emitted(v, v * 10);
    }
    assertEquals(FeedbackTracker.REMEMBERED, tracker.emittedVersions().size());
    assertEquals(0, tracker.stepOf(1));
    assertEquals(740, tracker.stepOf(74));
  }

  @Test
  void aCompletedCheckpointFreesVersionsOlderThanOneBelowWhatEveryShardHeld() {
    tracker.emitted(1, 10);
    tracker.emitted(2, 20);
    tracker.emitted(3, 30);
    tracker.observed(3, 35);
    tracker.checkpointTaken(7);
    tracker.observed(4, 45); // after the checkpoint: not what a restore from it can rely on
    assertEquals(2, tracker.checkpointCompleted(7));
    assertEquals(0, tracker.checkpointCompleted(7), "a checkpoint counts once");
    tracker.checkpointTaken(8);
    assertEquals(3, tracker.checkpointCompleted(8));
  }

  @Test
  void stateSurvivesACheckpoint() {
    tracker.emitted(1, 10);
    tracker.observed(1, 12);
    TrainerCheckpoint c = new TrainerCheckpoint();
    tracker.save(c);
    FeedbackTracker restored = new FeedbackTracker(clock::get);
    restored.restore(c);
    assertEquals(1, restored.versionEverywhere());
    assertEquals(2L, restored.latencySteps());
    assertEquals(10, restored.stepOf(1));
  }
}
