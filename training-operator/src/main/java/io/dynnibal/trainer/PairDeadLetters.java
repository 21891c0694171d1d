package io.dynnibal.trainer;

import io.dynnibal.schemas.DeadLetter;
import io.dynnibal.stream.DeadLetters;
import io.dynnibal.stream.QueryBatch;
import java.util.List;
import java.util.function.Consumer;

/**
 * The pairs the trainer takes but cannot train, each a dead letter with its reason and counted in
 * {@link StepMetrics}: a pair whose target is not in the index, and every pair of a step the
 * trainer refused. With the pairs it trains, they account for every pair it takes.
 */
final class PairDeadLetters {
  static final String STAGE = "trainer";

  private final String pairsTopic;
  private final StepMetrics metrics;

  PairDeadLetters(String pairsTopic, StepMetrics metrics) {
    this.pairsTopic = pairsTopic;
    this.metrics = metrics;
  }

  /** Pair {@code q} of {@code batch}, whose target the index does not hold. */
  void unknownTarget(QueryBatch batch, int q, Consumer<DeadLetter> out) {
    send(
        batch.pairIds[q],
        ": target_id "
            + DeadLetters.quoted(batch.targetIds[q])
            + " is not in the index (unknown, deleted, or not indexed yet)",
        out);
  }

  /**
   * Every pair of {@code batch} that step {@code step} would have trained, refused for {@code why}.
   */
  void refused(
      QueryBatch batch, List<String> pairs, long step, String why, Consumer<DeadLetter> out) {
    metrics.stepRefused();
    String reason =
        ": batch "
            + batch.batchId
            + " refused at step "
            + step
            + ": "
            + why
            + " (the parameters were left unchanged)";
    for (String pair : pairs) {
      send(pair, reason, out);
    }
  }

  private void send(String pairId, String reason, Consumer<DeadLetter> out) {
    metrics.deadLettered();
    out.accept(
        DeadLetters.ofDecoded(
            pairsTopic, pairId, "pair " + DeadLetters.quoted(pairId) + reason, STAGE));
  }
}
