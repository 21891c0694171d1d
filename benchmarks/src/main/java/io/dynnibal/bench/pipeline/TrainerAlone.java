package io.dynnibal.bench.pipeline;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.training.OperatorSettings;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.features.Features;
import io.dynnibal.training.DualEncoderTrainer;
import io.dynnibal.training.TrainingBatch;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The job's trainer alone (a {@link DualEncoderTrainer} in this JVM, nothing else running), the
 * other half of {@link PipelineBenchmark}: the same pairs in the order they were published, each
 * batch with as many negatives as the job's steps trained against on average, drawn uniformly (a
 * step costs the same whichever targets they are), target features computed once as the shards
 * would hold them.
 */
final class TrainerAlone {
  private TrainerAlone() {}

  /** Its steps/s and the CPU a step took on its thread (NaN: unmeasured). */
  public record Result(double stepsPerSecond, double cpuMillisPerStep) {}

  /**
   * Steps/s of a trainer with the job's model and optimiser settings on the pairs in published
   * order, batches of the job's size with {@code negatives} uniform negatives each, timed after the
   * same warm-up. Timed: featurizing the queries (the job's trainer does it too) and the step.
   */
  public static Result run(
      TrainingJobConfig config,
      List<TargetText> targets,
      List<LabelledQuery> pairs,
      int negatives,
      int warmupSteps,
      int steps,
      Random random) {
    Map<String, Integer> index = new HashMap<>();
    for (int i = 0; i < targets.size(); i++) {
      index.put(targets.get(i).targetId(), i);
    }
    try (DualEncoder encoder = DualEncoder.create(config.model(), config.job.seed)) {
      DualEncoderTrainer trainer =
          new DualEncoderTrainer(encoder, OperatorSettings.trainer(config).trainerConfig());
      // Target features as the shards hold them: computed once, outside the timing.
      Features[] features = new Features[targets.size()];
      int next = 0;
      long timedNanos = 0;
      long timedCpuNanos = 0;
      ThreadMXBean threads = ManagementFactory.getThreadMXBean();
      boolean cpuMeasured = threads.isCurrentThreadCpuTimeSupported();
      long total = (long) warmupSteps + steps;
      for (long s = 0; s < total; s++) {
        List<String> queryTexts = new ArrayList<>();
        List<String> positiveIds = new ArrayList<>();
        List<Features> positives = new ArrayList<>();
        List<String> negativeIds = new ArrayList<>();
        List<Features> negativeFeatures = new ArrayList<>();
        while (queryTexts.size() < config.training.batchSize) {
          LabelledQuery q = pairs.get(next++ % pairs.size());
          Integer t = index.get(q.targetId());
          if (t != null) {
            queryTexts.add(q.text());
            positiveIds.add(q.targetId());
            positives.add(featuresOf(encoder, targets, features, t));
          }
        }
        for (int i = 0; i < negatives; i++) {
          int t = random.nextInt(targets.size());
          negativeIds.add(targets.get(t).targetId());
          negativeFeatures.add(featuresOf(encoder, targets, features, t));
        }
        // Timed: what the job's trainer does with a merged batch. Not timed: looking up and
        // featurizing the targets, which the shards deliver featurized.
        long batchStart = System.nanoTime();
        long cpuStart = cpuMeasured ? threads.getCurrentThreadCpuTime() : 0;
        List<Features> queries = new ArrayList<>(queryTexts.size());
        for (String text : queryTexts) {
          queries.add(encoder.featurizeQuery(text));
        }
        trainer.step(
            new TrainingBatch(queries, positiveIds, positives, negativeIds, negativeFeatures));
        if (s >= warmupSteps) {
          timedNanos += System.nanoTime() - batchStart;
          timedCpuNanos += cpuMeasured ? threads.getCurrentThreadCpuTime() - cpuStart : 0;
        }
      }
      return new Result(
          steps / (timedNanos / 1e9), cpuMeasured ? timedCpuNanos / 1e6 / steps : Double.NaN);
    }
  }

  private static Features featuresOf(
      DualEncoder encoder, List<TargetText> targets, Features[] cache, int t) {
    if (cache[t] == null) {
      cache[t] = encoder.featurizeTarget(targets.get(t).text());
    }
    return cache[t];
  }
}
