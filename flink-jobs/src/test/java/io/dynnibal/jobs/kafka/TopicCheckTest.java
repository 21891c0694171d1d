package io.dynnibal.jobs.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What a restore into a topic is refused for, and what it is not. */
class TopicCheckTest {
  private static final long DAY = 86_400_000L;

  @Test
  void theSameTopicAndAYoungCheckpointPass() {
    TopicFacts compacted = new TopicFacts("t", "id-1", DAY);
    assertEquals(Optional.empty(), TopicCheck.problem("id-1", 0, compacted, DAY));
  }

  @Test
  void anotherTopicIdIsRefusedWithBothIds() {
    String problem =
        TopicCheck.problem("id-1", 0, new TopicFacts("t", "id-2", -1), 1).orElseThrow();
    assertTrue(
        problem.contains("topic t was deleted and created again")
            && problem.contains("id-1")
            && problem.contains("id-2")
            && problem.contains(DataLossException.ACCEPT),
        problem);
  }

  @Test
  void aCheckpointOlderThanACompactedTopicKeepsDeletesIsRefused() {
    String problem =
        TopicCheck.problem("id-1", 0, new TopicFacts("t", "id-1", DAY), DAY + 1).orElseThrow();
    assertTrue(
        problem.contains("compacted topic t") && problem.contains("delete.retention.ms 86400000"),
        problem);
  }

  @Test
  void anOldCheckpointOfATopicThatIsNotCompactedPasses() {
    assertEquals(
        Optional.empty(), TopicCheck.problem("id-1", 0, new TopicFacts("t", "id-1", -1), 9 * DAY));
  }
}
