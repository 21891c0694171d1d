package io.dynnibal.training.local;

import io.dynnibal.data.JsonlCorpus;
import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.eval.RetrievalEvaluator;
import io.dynnibal.eval.RetrievalMetrics;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.NegativesPool;
import io.dynnibal.snapshot.ParameterSnapshots;
import io.dynnibal.training.DualEncoderTrainer;
import io.dynnibal.training.LearningRateSchedule;
import io.dynnibal.training.ProgressBar;
import io.dynnibal.training.SamplingCorrection;
import io.dynnibal.training.SkippedStep;
import io.dynnibal.training.StepResult;
import io.dynnibal.training.TrainerConfig;
import io.dynnibal.training.TrainingBatch;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Trains a dual encoder from JSONL files in this JVM, without Kafka or Flink, with in-batch and
 * uniform negatives: the baseline every index-based sampler has to beat, and the way to measure the
 * trainer alone. Shaped like DJL's examples: {@link #run} takes the whole configuration and returns
 * the figures, so tests call it with a smoke config.
 */
public final class LocalTraining {
  private LocalTraining() {}

  /**
   * @param eval evaluation queries, or null to skip evaluation
   * @param maxSteps stop after this many steps even within an epoch (0: no limit)
   * @param maxMinutes stop once this much wall time has gone into steps (0: no limit); the learning
   *     rate then decays over the steps the budget is expected to hold, re-estimated from the
   *     steps' own pace as they run
   * @param evalLimit evaluate on at most this many queries (0: all)
   * @param snapshotBase where to write the final snapshot, or null
   * @param maxTargets keep at most this many targets (0: all): the evaluation queries' targets,
   *     then the training pairs', then the rest, each group in a seeded order
   * @param negativesPool the targets uniform negatives are drawn from: all, or those the training
   *     pairs name (the job's {@code negatives.pool})
   * @param unnamedShare under {@code positives}, the weight of a target no pair names against a
   *     named one's in the uniform draws (the job's {@code negatives.unnamed.share}: the job admits
   *     that share of them per model version, so each is drawn at the same rate on average)
   * @param correction whether each candidate's logit is corrected by how often the step expected to
   *     draw it ({@link SamplingCorrection}; the job's {@code negatives.correction})
   */
  public record Options(
      Path targets,
      Path train,
      Path eval,
      int epochs,
      int maxSteps,
      double maxMinutes,
      int batchSize,
      int uniformNegatives,
      NegativesPool negativesPool,
      double unnamedShare,
      SamplingCorrection.Mode correction,
      long seed,
      DualEncoderConfig model,
      float learningRate,
      float embeddingRateFactor,
      int warmupSteps,
      int evalLimit,
      URI snapshotBase,
      int maxTargets) {

    public Options {
      if (epochs < 1
          || batchSize < 1
          || uniformNegatives < 0
          || maxSteps < 0
          || !(maxMinutes >= 0)
          || warmupSteps < 0
          || evalLimit < 0
          || maxTargets < 0
          || !(unnamedShare >= 0 && unnamedShare <= 1)) {
        throw new IllegalArgumentException(
            "need epochs >= 1, batch >= 1, non-negative negatives, steps, minutes, warm-up"
                + " and eval limit, and an unnamed share in [0, 1]");
      }
    }
  }

  /**
   * @param firstLoss mean loss of the first 5 % of steps; {@code lastLoss} of the last 5 %
   * @param skippedSteps batches the trainer refused (non-finite loss or gradient), left out
   * @param before metrics of the untrained encoder (null without eval queries)
   * @param bm25 BM25 on the same targets and queries (null without eval queries)
   */
  public record Result(
      int steps,
      int trainPairs,
      int skippedPairs,
      double trainSeconds,
      double stepsPerSecond,
      float firstLoss,
      float lastLoss,
      int skippedSteps,
      RetrievalMetrics before,
      RetrievalMetrics after,
      RetrievalMetrics bm25,
      URI snapshot,
      String device) {}

  public static Result run(Options options, PrintStream progress) {
    List<TargetText> targets = JsonlCorpus.readTargets(options.targets());
    List<LabelledQuery> train = JsonlCorpus.readQueries(options.train());
    List<LabelledQuery> eval =
        options.eval() == null
            ? null
            : limit(JsonlCorpus.readQueries(options.eval()), options.evalLimit(), options.seed());
    if (options.maxTargets() > 0 && options.maxTargets() < targets.size()) {
      targets = subset(targets, eval, train, options.maxTargets(), options.seed());
    }
    try (DualEncoder encoder = DualEncoder.create(options.model(), options.seed())) {
      Map<String, Integer> targetIndex = new HashMap<>();
      List<Features> targetFeatures = new ArrayList<>(targets.size());
      for (int i = 0; i < targets.size(); i++) {
        targetIndex.put(targets.get(i).targetId(), i);
        targetFeatures.add(encoder.featurizeTarget(targets.get(i).text()));
      }
      List<LabelledQuery> usable = new ArrayList<>(train.size());
      for (LabelledQuery q : train) {
        if (targetIndex.containsKey(q.targetId())) {
          usable.add(q);
        }
      }
      encoder
          .describeTokenBudgets(
              targets.stream().map(TargetText::text).toList(),
              (eval == null ? usable : eval).stream().map(LabelledQuery::text).toList())
          .forEach(progress::println);
      if (usable.size() < options.batchSize()) {
        throw new IllegalArgumentException(
            "only "
                + usable.size()
                + " training pairs name a known target (of "
                + train.size()
                + "); a batch needs "
                + options.batchSize());
      }
      UniformPool pool =
          UniformPool.of(
              options.negativesPool(), options.unnamedShare(), usable, targetIndex, targets.size());
      int stepsPerEpoch = usable.size() / options.batchSize();
      int plannedSteps = stepsPerEpoch * options.epochs();
      if (options.maxSteps() > 0) {
        plannedSteps = Math.min(plannedSteps, options.maxSteps());
      }
      RetrievalMetrics before =
          eval == null ? null : RetrievalEvaluator.evaluate(encoder, targets, eval);
      DualEncoderTrainer trainer =
          new DualEncoderTrainer(
              encoder,
              new TrainerConfig(
                  schedule(options, plannedSteps),
                  options.embeddingRateFactor(),
                  io.dynnibal.model.AdamSettings.DEFAULT,
                  TrainerConfig.DEFAULT_CLIP_NORM));
      TimeBudget budget = new TimeBudget(options.maxMinutes(), plannedSteps);
      Random random = new Random(options.seed());
      float[] losses = new float[plannedSteps];
      ProgressBar bar =
          budget.limited()
              ? new ProgressBar(progress, "training (s)", budget.seconds())
              : new ProgressBar(progress, "training", plannedSteps);
      int step = 0;
      int skipped = 0;
      while (step < budget.steps()) {
        List<LabelledQuery> epoch = new ArrayList<>(usable);
        Collections.shuffle(epoch, random);
        for (int from = 0;
            from + options.batchSize() <= epoch.size() && step < budget.steps();
            from += options.batchSize()) {
          TrainingBatch batch =
              batch(
                  epoch.subList(from, from + options.batchSize()),
                  encoder,
                  targetIndex,
                  targets,
                  targetFeatures,
                  pool,
                  options.uniformNegatives(),
                  options.correction(),
                  random);
          StepResult result;
          try {
            result = trainer.step(batch);
          } catch (SkippedStep e) {
            // The trainer left everything as it was; report the batch and go on, as the job does.
            skipped++;
            progress.println("skipped a batch: " + e.getMessage());
            if (skipped > Math.max(10, plannedSteps / 10)) {
              throw new IllegalStateException(
                  skipped + " batches skipped (non-finite loss or gradient); stopping", e);
            }
            continue;
          }
          losses[step++] = result.loss();
          if (budget.replan(step)) {
            trainer.reschedule(schedule(options, budget.steps()));
          }
          String detail =
              String.format("loss %.3f  %.1f steps/s", result.loss(), step / budget.elapsed());
          bar.draw(budget.limited() ? (long) budget.elapsed() : step, detail);
        }
      }
      double seconds = budget.elapsed();
      bar.finish(budget.limited() ? (long) seconds : step, "");
      RetrievalMetrics after =
          eval == null ? null : RetrievalEvaluator.evaluate(encoder, targets, eval);
      URI snapshot =
          options.snapshotBase() == null
              ? null
              : ParameterSnapshots.write(trainer, options.snapshotBase(), step, options.seed());
      int window = Math.max(1, step / 20);
      return new Result(
          step,
          usable.size(),
          train.size() - usable.size(),
          seconds,
          step / seconds,
          mean(losses, 0, window),
          mean(losses, step - window, step),
          skipped,
          before,
          after,
          eval == null ? null : io.dynnibal.eval.Bm25Baseline.evaluate(targets, eval),
          snapshot,
          encoder.device().toString());
    }
  }

  private static LearningRateSchedule schedule(Options options, int totalSteps) {
    return new LearningRateSchedule(
        options.learningRate(), options.warmupSteps(), totalSteps, 0.05f, 1f);
  }

  /**
   * At most {@code max} targets: those the evaluation queries name, then those the training pairs
   * name, then the rest; each group shuffled with {@code seed}, the kept ones in corpus order.
   */
  public static List<TargetText> subset(
      List<TargetText> targets,
      List<LabelledQuery> eval,
      List<LabelledQuery> train,
      int max,
      long seed) {
    Map<String, Integer> group = new HashMap<>();
    if (eval != null) {
      eval.forEach(q -> group.putIfAbsent(q.targetId(), 0));
    }
    train.forEach(q -> group.putIfAbsent(q.targetId(), 1));
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < targets.size(); i++) {
      order.add(i);
    }
    Collections.shuffle(order, new Random(seed));
    order.sort(
        java.util.Comparator.comparingInt(i -> group.getOrDefault(targets.get(i).targetId(), 2)));
    List<Integer> kept = new ArrayList<>(order.subList(0, max));
    Collections.sort(kept);
    List<TargetText> subset = new ArrayList<>(max);
    kept.forEach(i -> subset.add(targets.get(i)));
    return subset;
  }

  /**
   * B pairs, their positives, and U targets drawn (with replacement) from {@code pool}, shared by
   * the batch.
   */
  static TrainingBatch batch(
      List<LabelledQuery> pairs,
      DualEncoder encoder,
      Map<String, Integer> targetIndex,
      List<TargetText> targets,
      List<Features> targetFeatures,
      UniformPool pool,
      int uniform,
      SamplingCorrection.Mode correction,
      Random random) {
    List<Features> queries = new ArrayList<>(pairs.size());
    List<String> positiveIds = new ArrayList<>(pairs.size());
    List<Features> positives = new ArrayList<>(pairs.size());
    for (LabelledQuery q : pairs) {
      queries.add(encoder.featurizeQuery(q.text()));
      positiveIds.add(q.targetId());
      positives.add(targetFeatures.get(targetIndex.get(q.targetId())));
    }
    List<String> negativeIds = new ArrayList<>(uniform);
    List<Features> negatives = new ArrayList<>(uniform);
    for (int i = 0; i < uniform; i++) {
      int t = pool.draw(random);
      negativeIds.add(targets.get(t).targetId());
      negatives.add(targetFeatures.get(t));
    }
    float[] offsets =
        correction == SamplingCorrection.Mode.LOGQ
            ? SamplingCorrection.offsets(
                positiveIds,
                negativeIds,
                id -> pool.expectedCount(targetIndex.get(id), pairs.size(), uniform))
            : null;
    return new TrainingBatch(queries, positiveIds, positives, negativeIds, negatives, offsets);
  }

  private static List<LabelledQuery> limit(List<LabelledQuery> queries, int limit, long seed) {
    if (limit == 0 || queries.size() <= limit) {
      return queries;
    }
    List<LabelledQuery> shuffled = new ArrayList<>(queries);
    Collections.shuffle(shuffled, new Random(seed ^ 0xE7A1L));
    return shuffled.subList(0, limit);
  }

  private static float mean(float[] values, int from, int to) {
    double sum = 0;
    for (int i = from; i < to; i++) {
      sum += values[i];
    }
    return to > from ? (float) (sum / (to - from)) : Float.NaN;
  }
}
